import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeFormValue, encodeFormValue, looksEncoded } from "../../src/decode/form.js";

const MALFORMED = ["%", "%zz", "100%", "%E0%A4%A", "%ED%A0%80", "%2", "%%41", "a%g1", "%C0%80"];
const MALFORMED_MORE = ["%F4%90%80%80", "%F5%80%80%80", "%80", "%C2", "%C2%41", "%E0%80%80", "%FF"];

/** Lone surrogates → U+FFFD, as .NET's UTF-8 encoder does (String#toWellFormed is ES2024). */
function wellFormed(s: string): string {
  return s.replace(
    /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g,
    "\uFFFD",
  );
}

function tryDecodeURIComponent(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}

const fatalUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
function tryUtf8(bytes: Uint8Array): string | undefined {
  try {
    return fatalUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** Any UTF-16 code unit, lone surrogates included. */
const anyCodeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));
/** Strings built from what percent sequences are made of, plus some noise. */
const percentish = fc.string({
  unit: fc.oneof(
    fc.constantFrom("%", "+", " ", "@", "2", "b", "B", "e", "E", "f", "F", "0", "8", "9", "c", "z"),
    fc.constantFrom("%2b", "%2B", "%25", "%c3", "%a9", "%ed", "%a0", "%80", "%f0", "%9f", "%e0"),
    fc.string({ unit: "binary", maxLength: 1 }),
  ),
});

describe("decodeFormValue", () => {
  it.each([
    ["548+Market+St.", "548 Market St."],
    ["United+States", "United States"],
    ["jane.doe%40example.com", "jane.doe@example.com"],
    ["http%3a%2f%2fwww.example.com%2ftrack%3fid%3d1", "http://www.example.com/track?id=1"],
    ["http%3A%2F%2Fwww.example.com%2Ftrack%3Fid%3D1", "http://www.example.com/track?id=1"],
    ["%2B33+1+23+45+67+89", "+33 1 23 45 67 89"],
    ["%2b33", "+33"],
    ["%252B", "%2B"],
    ["%252e", "%2e"],
    ["Z%c3%bcrich", "Zürich"],
    ["%e2%82%ac+5", "€ 5"],
    ["%f0%9f%98%80", "\u{1F600}"],
    ["%ef%bb%bfBOM", "\uFEFFBOM"],
    ["a%00b", "a\u0000b"],
    ["+", " "],
    ["", ""],
  ])("decodes %j to %j", (input, expected) => {
    expect(decodeFormValue(input)).toBe(expected);
  });

  it.each([...MALFORMED, ...MALFORMED_MORE])("returns undefined for malformed %j", (input) => {
    expect(() => decodeFormValue(input)).not.toThrow();
    expect(decodeFormValue(input)).toBeUndefined();
  });

  // The UTF-8 table's second-byte bounds (RFC 3629 §4): overlong forms after E0 and F0,
  // surrogates after ED, above U+10FFFF after F4. Random bytes rarely reach these.
  it.each([
    "%f0%80%80%af", // overlong '/'
    "%F0%80%80%80", // overlong NUL
    "%f0%8f%bf%bf", // overlong U+FFFF, the highest F0 overlong
    "%e0%9f%bf", // overlong U+07FF, the highest E0 overlong
    "%ED%BF%BF", // U+DFFF, the highest surrogate
    "%f4%bf%bf%bf", // above U+10FFFF
  ])("refuses the out-of-range UTF-8 sequence %j, as the platform does", (input) => {
    expect(decodeFormValue(input)).toBeUndefined();
    expect(tryDecodeURIComponent(input)).toBeUndefined();
  });

  it.each([
    ["%f0%90%80%80", "\u{10000}"],
    ["%e0%a0%80", "\u0800"],
    ["%ed%9f%bf", "\uD7FF"],
    ["%F4%8F%BF%BF", "\u{10FFFF}"],
  ])("decodes the first in-range sequence %j next to each bound", (input, expected) => {
    expect(decodeFormValue(input)).toBe(expected);
    expect(decodeFormValue(input)).toBe(decodeURIComponent(input));
  });

  it("turns + into a space before percent-decoding, never after", () => {
    expect(decodeFormValue("a%2bb+c")).toBe("a+b c");
  });

  it("returns the very same string when there is nothing to decode", () => {
    const plain = "45 Leather Lane";
    expect(decodeFormValue(plain)).toBe(plain);
  });

  it("round-trips every grapheme string", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), (s) => {
        expect(decodeFormValue(encodeFormValue(s))).toBe(s);
      }),
    );
  });

  it("round-trips every well-formed full-Unicode string", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (s) => {
        expect(decodeFormValue(encodeFormValue(s))).toBe(s);
      }),
    );
  });

  it("decodes exactly once", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (s) => {
        const once = encodeFormValue(s);
        expect(decodeFormValue(encodeFormValue(once))).toBe(once);
      }),
    );
  });

  it("never throws, whatever the input", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ unit: "binary" }), fc.string({ unit: anyCodeUnit }), percentish),
        (s) => {
          const out = decodeFormValue(s);
          expect(out === undefined || typeof out === "string").toBe(true);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("agrees with decodeURIComponent after + → space", () => {
    fc.assert(
      fc.property(fc.oneof(percentish, fc.string({ unit: anyCodeUnit })), (s) => {
        expect(decodeFormValue(s)).toBe(tryDecodeURIComponent(s.replaceAll("+", " ")));
      }),
      { numRuns: 2000 },
    );
  });

  // Issue 13 (speed3): the `+` of the text between the sequences become spaces as it is copied
  // (one pass, no intermediate string); `+` and `%` packed together, at a sequence's hex digits,
  // before, between and after sequences, multi-byte ones split by a `+`.
  it("decodes + next to, inside and between percent sequences as the two steps did", () => {
    const dense = fc
      .array(
        fc.constantFrom(
          "+",
          "+",
          "%",
          "%",
          "2",
          "b",
          "B",
          "c",
          "3",
          "8",
          "9",
          "e",
          "f",
          "F",
          "0",
          "a",
          " ",
          "é",
          "\u{1F600}",
        ),
        { maxLength: 24 },
      )
      .map((parts) => parts.join(""));
    fc.assert(
      fc.property(dense, (s) => {
        expect(decodeFormValue(s)).toBe(tryDecodeURIComponent(s.replaceAll("+", " ")));
      }),
      { numRuns: 20000 },
    );
    for (const [input, expected] of [
      ["+%2b+", " + "],
      ["%c3%a9+%c3%a9", "é é"],
      ["a+b+c%21+d+e", "a b c! d e"],
      ["%c3+%a9", undefined],
      ["%+2b", undefined],
      ["%2+b", undefined],
      ["++%25++", "  %  "],
      ["x+", "x "],
      ["+", " "],
    ] as const) {
      expect(decodeFormValue(input)).toBe(expected);
    }
  });

  it("validates UTF-8 exactly like a fatal TextDecoder", () => {
    const hexByte = fc.tuple(fc.integer({ min: 0, max: 255 }), fc.boolean()).map(([b, upper]) => {
      const hex = b.toString(16).padStart(2, "0");
      return { b, text: `%${upper ? hex.toUpperCase() : hex}` };
    });
    // Bias towards lead and continuation bytes so multi-byte sequences are common.
    const utf8ish = fc.oneof(
      hexByte,
      fc.integer({ min: 0x80, max: 0xbf }).map((b) => ({ b, text: `%${b.toString(16)}` })),
      fc.integer({ min: 0xc0, max: 0xff }).map((b) => ({ b, text: `%${b.toString(16)}` })),
    );
    fc.assert(
      fc.property(fc.array(utf8ish, { maxLength: 12 }), (parts) => {
        const bytes = Uint8Array.from(parts.map((p) => p.b));
        const text = parts.map((p) => p.text).join("");
        expect(decodeFormValue(text)).toBe(tryUtf8(bytes));
      }),
      { numRuns: 5000 },
    );
  });
});

describe("encodeFormValue", () => {
  it.each([
    ["548 Market St.", "548+Market+St."],
    ["jane.doe@example.com", "jane.doe%40example.com"],
    ["http://www.example.com/track?id=1", "http%3a%2f%2fwww.example.com%2ftrack%3fid%3d1"],
    ["+33 1", "%2b33+1"],
    ["%2B", "%252B"],
    ["AZaz09-_.!*()", "AZaz09-_.!*()"],
    ["'~\"#&,/:;=?[]", "%27%7e%22%23%26%2c%2f%3a%3b%3d%3f%5b%5d"],
    ["Zürich", "Z%c3%bcrich"],
    ["€", "%e2%82%ac"],
    ["\u{1F600}", "%f0%9f%98%80"],
    ["\t\n\u0000\u007f", "%09%0a%00%7f"],
  ])("encodes %j as .NET does: %j", (input, expected) => {
    expect(encodeFormValue(input)).toBe(expected);
  });

  it("encodes a lone surrogate as U+FFFD, like .NET", () => {
    expect(encodeFormValue("a\uD800b")).toBe("a%ef%bf%bdb");
    expect(encodeFormValue("\uDC00")).toBe("%ef%bf%bd");
    expect(encodeFormValue("\uD83D\uD83D\uDE00")).toBe("%ef%bf%bd%f0%9f%98%80");
    expect(decodeFormValue(encodeFormValue("x\uDFFF"))).toBe("x\uFFFD");
  });

  it("returns the very same string when nothing needs encoding", () => {
    const safe = "Already-Safe_Value.1";
    expect(encodeFormValue(safe)).toBe(safe);
  });

  it("writes only the encoder's alphabet, with lower-case hex", () => {
    fc.assert(
      fc.property(fc.string({ unit: anyCodeUnit }), (s) => {
        const encoded = encodeFormValue(s);
        expect(encoded).toMatch(/^(?:[A-Za-z0-9\-_.!*()+]|%[0-9a-f]{2})*$/);
        expect(decodeFormValue(encoded)).toBe(wellFormed(s));
      }),
      { numRuns: 2000 },
    );
  });
});

describe("looksEncoded", () => {
  it.each([
    "548+Market+St.",
    "jane.doe%40example.com",
    "http%3a%2f%2fwww.example.com%2ftrack%3fid%3d1",
    "%2B33+1",
    "%252B",
    "United+States",
    "O'Brien+Street",
    // A value whose text starts with a space: .NET writes the space as a leading +.
    "+548+Market+St.",
    "+jane%2btag%40example.com",
    "+New+York",
    "+%2b44",
    // An RFC 3986 encoder (encodeURIComponent, Uri.EscapeDataString) keeps `~` (review spec,
    // SPEC-1: 001 §4.6 says the tracking URL is sent percent-encoded).
    "https%3A%2F%2Fcarrier.example%2F~track%2Fview%3Fid%3D1Z999%20AA1",
    ...MALFORMED,
  ])("true for %j", (value) => {
    expect(looksEncoded(value)).toBe(true);
  });

  it.each([
    "+44 20 7946 0958",
    "+442079460958",
    "+ 44 (0)808 258 0300",
    "info@example.com",
    "jane+tag@example.com",
    "45 Leather Lane",
    "100% Cotton Lane",
    "Leather",
    "",
    "+",
    "+44-20-7946-0958",
    "+1.415.555.0100",
    "Zürich+Nord",
    "Tel:0044+20",
    "a/b+c",
    // Review final2: `~` beside a literal `+` is neither encoder's output (an RFC 3986 encoder
    // writes a space %20 and a plus %2B; HttpUtility.UrlEncode writes `~` as %7e).
    "ABC~12+34",
  ])("false for %j", (value) => {
    expect(looksEncoded(value)).toBe(false);
  });

  // A leading + is read as a phone's plus only when nothing else in the value is encoded (no other
  // + and no %): "+44…" stays plain, while " 548 Market St." (sent as "+548+Market+St.") and any
  // leading-space value with a second space or an escaped character are recognised. What is left
  // plain is a leading space followed by one word of the encoder's own alphabet ("+York").
  it("recognises everything the encoder writes, unless it is + and one plain word", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: "binary" }),
          fc.string({ unit: "binary" }).map((s) => ` ${s}`),
          fc.string({ unit: fc.constantFrom(" ", "a", "4", "+", "@", ".") }),
        ),
        (s) => {
          const encoded = encodeFormValue(s);
          const phoneLike = encoded.startsWith("+") && !/[+%]/.test(encoded.slice(1));
          const expected = (encoded.includes("%") || encoded.includes("+")) && !phoneLike;
          expect(looksEncoded(encoded)).toBe(expected);
        },
      ),
    );
  });
});
