/**
 * Text from a model, made safe to show a person: every character a terminal
 * or a text view would act on, hide or reorder is written as an escape, so
 * what the person reads is exactly what the text holds.
 *
 * @module
 */

/**
 * The characters {@link visibleText} escapes: the backslash (so an escape
 * in the shown text is always one this function wrote); controls (C0, DEL,
 * C1), format characters (the bidi controls U+202A–U+202E and U+2066–U+2069,
 * U+200E/U+200F, U+061C, zero-width characters, U+FEFF, tag characters),
 * surrogates standing alone, private-use and unassigned code points; every
 * whitespace but the plain space (newlines, tabs, U+2028/U+2029, no-break
 * and other wide or narrow spaces); and the default-ignorable code points,
 * which render as nothing (variation selectors, Hangul fillers, U+034F).
 */
const ESCAPED =
  /[\\\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]|[^\S ]/gu;

/** The short escapes of the commonest ones, as a shell's `$'…'` reads them. */
const SHORT: Readonly<Record<string, string>> = {
  "\\": "\\\\",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
};

/**
 * `text` as a person should see it on an approval card or a terminal: one
 * line, each character of {@link ESCAPED} written as `\\`, `\n`, `\r`, `\t`
 * or `\u{hex}` (its code point), everything else as it is. The escaping can
 * be undone without doubt, as every backslash in the result starts an
 * escape.
 *
 * @example
 * ```ts
 * import { visibleText } from "@openwork/tools";
 * console.log(visibleText("ls\u001b[8m\nrm \\x")); // ls\u{1b}[8m\nrm \\x
 * ```
 */
export function visibleText(text: string): string {
  return text.replace(
    ESCAPED,
    (char) => SHORT[char] ?? `\\u{${char.codePointAt(0)!.toString(16)}}`,
  );
}
