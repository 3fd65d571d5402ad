// The aliased older majors are typed with the current majors' types: the APIs used are the same.
declare module "express4" {
  import express = require("express");
  export = express;
}

declare module "koa2" {
  import Koa = require("koa");
  export = Koa;
}
