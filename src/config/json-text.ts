/**
 * JSON text as people hand it over: a byte-order mark some Windows editors write
 * at the top, a syntax error said the way a person editing the file would say it, with its
 * line and column, and keys written twice in one object — which JSON.parse silently settles
 * by keeping the last. Browser-safe: jsonc-parser is pure JavaScript.
 */
import { parse, printParseErrorCode, visit, type ParseError } from "jsonc-parser";

/** U+FEFF, what a UTF-8 BOM (EF BB BF) decodes to. */
const BOM = "\uFEFF";

/** The text without a leading byte-order mark: editors do not count it as a column either. */
export function withoutBom(text: string): string {
  return text.startsWith(BOM) ? text.slice(BOM.length) : text;
}

/** jsonc-parser's error codes as a person editing the file would say them. */
export const SYNTAX_REASONS: Readonly<Record<string, string>> = {
  InvalidSymbol: "unexpected character here",
  InvalidNumberFormat: "this number is not written the JSON way",
  PropertyNameExpected: "expected a key in double quotes",
  ValueExpected: "expected a value",
  ColonExpected: "expected a `:` between the key and its value",
  CommaExpected: "expected a `,` before the next entry",
  CloseBraceExpected: "expected a `}` to close this object",
  CloseBracketExpected: "expected a `]` to close this list",
  EndOfFileExpected: "expected the end of the file after the top-level object",
  InvalidCommentToken: "this comment is not closed",
  UnexpectedEndOfComment: "the file ends inside a comment",
  UnexpectedEndOfString: 'this string is not closed with a `"`',
  UnexpectedEndOfNumber: "the file ends inside a number",
  InvalidUnicode: "this `\\u` escape needs four hex digits",
  InvalidEscapeCharacter: "this backslash escape is not one JSON knows",
  InvalidCharacter: "this character must be escaped inside a string",
};

/** One 1-based place in a text. */
export interface TextPosition {
  line: number;
  column: number;
}

/** Where each offset of `text` is, as a line and a column (both 1-based). */
export function positionOf(text: string): (offset: number) => TextPosition {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === "\n") starts.push(i + 1);
  return (offset) => {
    let low = 0;
    let high = starts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (starts[mid]! <= offset) low = mid;
      else high = mid - 1;
    }
    return { line: low + 1, column: offset - starts[low]! + 1 };
  };
}

/** Why `text` is not strict JSON and where, or undefined when it is. */
export function strictJsonError(text: string): (TextPosition & { reason: string }) | undefined {
  const errors: ParseError[] = [];
  parse(text, errors, { allowTrailingComma: false, disallowComments: true });
  const first = errors[0];
  if (first === undefined) return undefined;
  const code = printParseErrorCode(first.error);
  return { reason: SYNTAX_REASONS[code] ?? code, ...positionOf(text)(first.offset) };
}

/** A key written again in the same object; `first` is where it was written before. */
export interface DuplicateKey {
  key: string;
  /** The keys of the objects around it, from the top (`["mcpServers"]`). */
  path: string[];
  line: number;
  column: number;
  first: TextPosition;
}

/** Every string of strict JSON text, and whether a `:` follows it (it is a key). */
const JSON_STRING = /"(?:[^"\\]|\\.)*"(\s*:)?/g;

/** How many keys the objects of a parsed value hold, all the way down. */
function keysIn(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + keysIn(v), 0);
  if (typeof value !== "object" || value === null) return 0;
  let n = 0;
  for (const v of Object.values(value)) n += 1 + keysIn(v);
  return n;
}

/**
 * Whether strict JSON `text`, which JSON.parse made `value` of, may write a key twice: it
 * does when it spells more keys than `value` holds. Counting is a regular expression over
 * the text, many times faster than the visitor duplicateKeys runs; a large generated file,
 * which almost never repeats a key, is not walked twice.
 */
export function mayRepeatKeys(text: string, value: unknown): boolean {
  let written = 0;
  for (const match of text.matchAll(JSON_STRING)) if (match[1] !== undefined) written++;
  return written !== keysIn(value);
}

/**
 * Every key written twice (or more) in one object, at each repetition, in file order. Only
 * for text that parses: a syntax error is found, and said, elsewhere.
 */
export function duplicateKeys(text: string): DuplicateKey[] {
  const found: DuplicateKey[] = [];
  // One map per open object (key → where it was first written); arrays hold no keys but
  // must be stacked so an object inside one is told apart from its parent.
  const open: (Map<string, TextPosition> | undefined)[] = [];
  visit(
    text,
    {
      onObjectBegin: () => void open.push(new Map()),
      onObjectEnd: () => void open.pop(),
      onArrayBegin: () => void open.push(undefined),
      onArrayEnd: () => void open.pop(),
      onObjectProperty: (key, _offset, _length, startLine, startCharacter, path) => {
        const keys = open.at(-1);
        if (keys === undefined) return;
        const here = { line: startLine + 1, column: startCharacter + 1 };
        const first = keys.get(key);
        if (first === undefined) keys.set(key, here);
        else found.push({ key, path: path().map(String), ...here, first });
      },
    },
    { allowTrailingComma: true, disallowComments: false },
  );
  return found;
}
