/* eslint-disable no-var -- a global is declared with `var`, as TypeScript's own lib files do. */
/**
 * The two globals of the WHATWG Encoding standard the codec uses, declared as narrowly as it
 * uses them. Node (since 11), Deno, Bun and browsers all have them; only this package's own
 * compile reads this file, so consumers keep their runtime's full declarations.
 */
interface TextDecoder {
  decode(input?: Uint8Array): string;
}
declare var TextDecoder: {
  prototype: TextDecoder;
  new (label?: string, options?: { fatal?: boolean; ignoreBOM?: boolean }): TextDecoder;
};
interface TextEncoder {
  encode(input?: string): Uint8Array;
}
declare var TextEncoder: {
  prototype: TextEncoder;
  new (): TextEncoder;
};
