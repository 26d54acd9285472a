/**
 * Text from a model, made safe to show a person: every character a terminal
 * or a text view would act on, hide or reorder, and every one that can pass
 * for another, is written as an escape, so what the person reads is exactly
 * what the text holds.
 *
 * @module
 */

/**
 * The characters beyond ASCII shown as they are: composed Latin letters with
 * accents (Latin-1, Latin Extended-A, the Vietnamese and Romanian ones of
 * Extended-B, Latin Extended Additional); Chinese and Japanese letters (not
 * their halfwidth forms) with the prolonged sound mark ー; and Korean
 * syllables (not the lone jamo, among which ㅡ and ㅣ read as - and |). None
 * of them passes for an ASCII character, renders as nothing or reorders the
 * line.
 *
 * Every other character beyond ASCII is escaped, and so is the backslash
 * (an escape in the shown text is then always one {@link visibleText}
 * wrote): controls (C0, DEL, C1); format characters (the bidi controls,
 * zero-width characters, U+FEFF, tags); every whitespace but the plain
 * space; default-ignorable code points (variation selectors, Hangul
 * fillers); lone surrogates, private-use and unassigned code points;
 * Cyrillic, Greek and many other letters, which pass for Latin ones (`truе`
 * with a Cyrillic е is not `true`); symbols and punctuation, which pass for
 * shell syntax (♯ for `#`, ʺ for `"`, ꞉ for `:`, fullwidth forms, the blank
 * U+2800); and Hebrew and Arabic letters, which reorder the text around them
 * in a bidi-aware view (`cat ב > א` shows as `cat א < ב`).
 */
const SHOWN_LETTER =
  /^(?:[\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u017f\u01a0\u01a1\u01af\u01b0\u0218-\u021b\u1e00-\u1eff\u30fc\uac00-\ud7a3]|(?=\p{L})(?![\uff00-\uffef])[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}])$/u;

/** Kana, after which the voicing marks U+3099/U+309A are shown. */
const KANA = /^[\p{Script=Hiragana}\p{Script=Katakana}]$/u;

/**
 * The accents shown after an ASCII letter (a decomposed é is e and U+0301):
 * U+0300–U+036F but the overlays (U+0334–U+0338, which make o read as ø and
 * = as ≠), the invisible U+034F and the double accents spanning the next
 * character (U+035C–U+0362).
 */
const ACCENT = /^[\u0300-\u0333\u0339-\u034e\u0350-\u035b\u0363-\u036f]$/u;

/** Most accents shown on one letter; more stack over the lines above and below. */
const MAX_ACCENTS = 2;

/** A run of printable ASCII characters but the backslash, from where it is set to look. */
const PLAIN_RUN = /[\x20-\x5b\x5d-\x7e]+/y;

/** A space after a space, within such a run (none comes before a run: it would be in it). */
const SPACE_AFTER_SPACE = /(?<= ) /g;

/** The short escapes of the commonest ones, as a shell's `$'…'` reads them. */
const SHORT: Readonly<Record<string, string>> = {
  "\\": "\\\\",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
};

/** `char` as an escape: `\\`, `\n`, `\r`, `\t` or `\u{hex}` (its code point). */
function escaped(char: string): string {
  return SHORT[char] ?? `\\u{${char.codePointAt(0)!.toString(16)}}`;
}

/**
 * `text` as a person should see it on an approval card or a terminal: one
 * line, in which every character is printable ASCII, a letter of
 * {@link SHOWN_LETTER}, an accent on an ASCII letter (at most two) or a
 * voicing mark on a kana, or an escape: `\\`, `\n`, `\r`, `\t` or
 * `\u{hex}` (its code point). A space after a space is written `\u{20}`,
 * so no stretch of the text reads as blank. The escaping can be undone
 * without doubt, as every backslash in the result starts an escape.
 *
 * @example
 * ```ts
 * import { visibleText } from "@openwork/tools";
 * console.log(visibleText("ls\u001b[8m\nrm \\x")); // ls\u{1b}[8m\nrm \\x
 * console.log(visibleText("tru\u0435 || rm -rf ~")); // tru\u{435} || rm -rf ~
 * ```
 */
export function visibleText(text: string): string {
  let shown = "";
  // What the last character shown as it is can carry: accents (an ASCII letter), a voicing mark
  // (a kana), or nothing; and how many it carries already.
  let carrier: "letter" | "kana" | null = null;
  let marks = 0;
  let at = 0;
  while (at < text.length) {
    // Printable ASCII but the backslash, a run at a time: a long command is mostly that.
    PLAIN_RUN.lastIndex = at;
    const run = PLAIN_RUN.exec(text)?.[0];
    if (run !== undefined) {
      shown += run.replace(SPACE_AFTER_SPACE, "\\u{20}");
      carrier = /[A-Za-z]$/.test(run) ? "letter" : null;
      marks = 0;
      at += run.length;
      continue;
    }
    const code = text.codePointAt(at)!;
    const char = String.fromCodePoint(code);
    at += char.length;
    if (
      (carrier === "letter" && marks < MAX_ACCENTS && ACCENT.test(char)) ||
      (carrier === "kana" && marks < 1 && (code === 0x3099 || code === 0x309a))
    ) {
      shown += char;
      marks++;
      continue;
    }
    const plain = SHOWN_LETTER.test(char);
    carrier = plain && KANA.test(char) ? "kana" : null;
    marks = 0;
    shown += plain ? char : escaped(char);
  }
  return shown;
}
