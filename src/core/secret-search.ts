/**
 * The search of a request's secrets in a text, all at once: an Aho–Corasick automaton over the
 * secrets, built once per redactor (review AMP-3: one search per secret cost the text times the
 * number of secrets, and a body may carry thousands of card objects). A text costs one pass
 * whatever the number of secrets; building costs their total length.
 */

const ZERO = 48;
const NINE = 57;

function isDigit(code: number): boolean {
  return code >= ZERO && code <= NINE;
}

/**
 * Below this many cells (states × symbols), the automaton is a full transition table: one lookup
 * per character (a request's card number and CVV: a few hundred cells). Above, transitions are
 * looked up in a map and failure links followed (linear overall, as each character deepens the
 * state by one at most).
 */
const DENSE_CELLS = 1 << 15;

/** The automaton over a set of patterns (non-empty; a duplicate counts once). */
export interface PatternSearch {
  /**
   * Marks, in `starts`, every occurrence of a pattern that stands apart from other digits (the
   * characters just before and after it are not digits): `starts[end]` is one more than the
   * start of the longest such occurrence ending at `end` (0 if none). Returns `starts`, allocated
   * on the first occurrence.
   */
  readonly startsOf: (text: string) => Int32Array | undefined;
  /**
   * The least index (in the list given) of a pattern occurring in the text, anywhere; -1 if none.
   * `below`: stop at the first pattern found of an index under it (`Infinity`: whether any
   * occurs at all).
   */
  readonly leastIndexIn: (text: string, below?: number) => number;
  /**
   * For each end position in the text, the length of the longest pattern occurring there,
   * anywhere (0 if none): in `lengths[end]`. Returns `lengths`, allocated on the first occurrence.
   */
  readonly longestEndingIn: (text: string) => Int32Array | undefined;
}

/** How to build a {@link patternSearch}. */
export interface PatternSearchOptions {
  /**
   * Whether {@link PatternSearch.leastIndexIn} tells which pattern (its least index) or only
   * whether one occurs (any index: 0). Telling costs a map of the patterns.
   */
  readonly indexed?: boolean;
  /** The most cells of a full transition table (for tests: 0 for failure links always). */
  readonly denseCells?: number;
}

/** The automaton over `patterns` (non-empty; a duplicate counts once, at its first index). */
export function patternSearch(
  patterns: readonly string[],
  { indexed = true, denseCells = DENSE_CELLS }: PatternSearchOptions = {},
): PatternSearch {
  // The symbols: 0 for a character no pattern holds (back to the root at once), then one per
  // character the patterns hold.
  const ascii = new Int32Array(128);
  const other = new Map<number, number>();
  let symbols = 1;
  let total = 0;
  for (const pattern of patterns) {
    total += pattern.length;
    for (let k = 0; k < pattern.length; k++) {
      const code = pattern.charCodeAt(k);
      if (code < 128) {
        if (ascii[code] === 0) ascii[code] = symbols++;
      } else if (!other.has(code)) other.set(code, symbols++);
    }
  }
  const width = symbols;
  const symbolOf = (code: number): number =>
    code < 128 ? (ascii[code] as number) : (other.get(code) ?? 0);

  // The trie, built a level at a time from the patterns sorted: a state is a range of the sorted
  // patterns sharing its characters, its children are numbered together (in the order of their
  // characters, for a binary search), and states are numbered breadth first.
  const sorted = [...patterns].sort();
  let indexOf: Map<string, number> | undefined;
  if (indexed) {
    indexOf = new Map();
    for (let index = 0; index < patterns.length; index++) {
      const pattern = patterns[index] as string;
      if (!indexOf.has(pattern)) indexOf.set(pattern, index);
    }
  }
  const capacity = total + 1;
  const low = new Int32Array(capacity);
  const high = new Int32Array(capacity);
  const depth = new Int32Array(capacity);
  const parent = new Int32Array(capacity);
  const code = new Int32Array(capacity);
  const firstChild = new Int32Array(capacity);
  const children = new Int32Array(capacity);
  // The pattern ending at the state (its index in the list given), -1 if none.
  const ends = new Int32Array(capacity).fill(-1);
  high[0] = sorted.length;
  let count = 1;
  for (let state = 0; state < count; state++) {
    const at = depth[state] as number;
    let k = low[state] as number;
    const last = high[state] as number;
    // A pattern that is the state itself sorts first; a duplicate of it right after, skipped
    // (its next character, past its end, is none: the loop below would never move past it).
    if (k < last && (sorted[k] as string).length === at) {
      ends[state] = indexOf === undefined ? 0 : (indexOf.get(sorted[k] as string) as number);
      while (k < last && (sorted[k] as string).length === at) k++;
    }
    firstChild[state] = count;
    while (k < last) {
      const char = (sorted[k] as string).charCodeAt(at);
      const child = count++;
      low[child] = k;
      while (k < last && (sorted[k] as string).charCodeAt(at) === char) k++;
      high[child] = k;
      depth[child] = at + 1;
      parent[child] = state;
      code[child] = char;
    }
    children[state] = count - (firstChild[state] as number);
  }

  /** The child of `state` by the character `char`, -1 if none. */
  function childOf(state: number, char: number): number {
    let from = firstChild[state] as number;
    let to = from + (children[state] as number);
    while (from < to) {
      const middle = (from + to) >>> 1;
      const found = code[middle] as number;
      if (found === char) return middle;
      if (found < char) from = middle + 1;
      else to = middle;
    }
    return -1;
  }

  const dense = count * width <= denseCells;
  const table = dense ? new Int32Array(count * width) : undefined;
  const fail = new Int32Array(count);
  // The longest pattern that is a proper suffix of the state and stands apart from digits within
  // it (the character before it, in the state, is not a digit): its length, 0 if none.
  const inner = new Int32Array(count);
  // The least index of a pattern that is a suffix of the state (the state included), -1 if none.
  const least = new Int32Array(count).fill(-1);
  // The length of the longest pattern that is a suffix of the state (the state included), 0 if none.
  const longest = new Int32Array(count);
  // Breadth first: a state's parent and failure are shallower, so done before it.
  for (let state = 1; state < count; state++) {
    const up = parent[state] as number;
    const f = up === 0 ? 0 : step(fail[up] as number, code[state] as number);
    fail[state] = f;
    if (f !== 0) {
      const before = (sorted[low[state] as number] as string).charCodeAt(
        (depth[state] as number) - (depth[f] as number) - 1,
      );
      inner[state] =
        (ends[f] as number) >= 0 && !isDigit(before) ? (depth[f] as number) : (inner[f] as number);
    }
    const own = ends[state] as number;
    const suffix = least[f] as number;
    least[state] = own >= 0 && (suffix < 0 || own < suffix) ? own : suffix;
    longest[state] = own >= 0 ? (depth[state] as number) : (longest[f] as number);
  }
  if (table !== undefined) {
    // Each row: its failure's (a lower state, done), then its own children.
    for (let state = 0; state < count; state++) {
      const row = state * width;
      if (state !== 0) {
        const from = (fail[state] as number) * width;
        table.copyWithin(row, from, from + width);
      }
      const first = firstChild[state] as number;
      for (let child = first; child < first + (children[state] as number); child++)
        table[row + symbolOf(code[child] as number)] = child;
    }
  }

  /** The state after the character `char` (held by some pattern) from `from`. */
  function step(from: number, char: number): number {
    let state = from;
    for (;;) {
      const next = childOf(state, char);
      if (next >= 0) return next;
      if (state === 0) return 0;
      state = fail[state] as number;
    }
  }

  return {
    startsOf(text) {
      let starts: Int32Array | undefined;
      let state = 0;
      for (let i = 0; i < text.length; i++) {
        const char = text.charCodeAt(i);
        const symbol = symbolOf(char);
        if (symbol === 0) {
          state = 0;
          continue;
        }
        state = table === undefined ? step(state, char) : (table[state * width + symbol] as number);
        if (state === 0 || isDigit(text.charCodeAt(i + 1))) continue;
        const size = depth[state] as number;
        const length =
          (ends[state] as number) >= 0 && !isDigit(text.charCodeAt(i - size))
            ? size
            : (inner[state] as number);
        if (length === 0) continue;
        starts ??= new Int32Array(text.length);
        starts[i] = i - length + 2;
      }
      return starts;
    },
    leastIndexIn(text, below = 0) {
      let found = -1;
      let state = 0;
      for (let i = 0; i < text.length; i++) {
        const char = text.charCodeAt(i);
        const symbol = symbolOf(char);
        if (symbol === 0) {
          state = 0;
          continue;
        }
        state = table === undefined ? step(state, char) : (table[state * width + symbol] as number);
        const index = least[state] as number;
        if (index >= 0 && (found < 0 || index < found)) {
          found = index;
          if (found < below) return found;
        }
      }
      return found;
    },
    longestEndingIn(text) {
      let lengths: Int32Array | undefined;
      let state = 0;
      for (let i = 0; i < text.length; i++) {
        const char = text.charCodeAt(i);
        const symbol = symbolOf(char);
        if (symbol === 0) {
          state = 0;
          continue;
        }
        state = table === undefined ? step(state, char) : (table[state * width + symbol] as number);
        const size = longest[state] as number;
        if (size === 0) continue;
        lengths ??= new Int32Array(text.length);
        lengths[i] = size;
      }
      return lengths;
    },
  };
}

/**
 * Marks, in `marks`, every position `starts` (see {@link PatternSearch.startsOf}) says an
 * occurrence covers: one pass from the end, keeping the least start of the occurrences ending at
 * or after the position.
 */
export function markStarts(starts: Int32Array, marks: Uint8Array): void {
  let reach = Number.POSITIVE_INFINITY;
  for (let i = starts.length - 1; i >= 0; i--) {
    const start = starts[i] as number;
    if (start > 0 && start - 1 < reach) reach = start - 1;
    if (reach <= i) marks[i] = 1;
  }
}
