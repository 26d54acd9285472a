/**
 * Reads a command line as bash would, for a strict subset of bash only, and
 * fails closed on everything outside it.
 *
 * Written by hand, not taken from a general bash parser, because the
 * classifier's promise is agreement with bash itself: a general grammar such
 * as tree-sitter-bash reads some lines differently from bash (`ls` newline
 * `\rm x`, a continuation before `#`, `\r` as a blank), and each such
 * difference would let a command run unseen. The subset here is small
 * enough that each rule below states bash's own behaviour, and the
 * differential test runs bash on generated lines to hold it to that.
 *
 * The subset: simple commands of literal words joined by `;`, `&&`, `||`,
 * `|`, `|&` and newlines. A word is made of plain characters, backslash
 * escapes of printable ASCII, '…' and "…" (with no `$` or backquote inside).
 * Not in it, and refused: every expansion and substitution (`$`, backquote,
 * unquoted `* ? [ ] { } ~`), redirections, `&`, `( )`, comments, backslash-
 * newline continuations, newlines inside quotes, control characters other
 * than tab and the newline between commands, and characters beyond ASCII
 * outside quotes (in a multibyte locale other than UTF-8 a byte of such a
 * character can hide the ASCII character after it).
 *
 * @module
 */

/** A simple command whose every word is a literal known before it runs. */
export interface LiteralCommand {
  /** The words, program first, after the shell's quote removal. */
  readonly words: readonly string[];
}

/** The commands of a line, or why it cannot be proven to be only those. */
export type ParsedLine =
  | { readonly ok: true; readonly commands: readonly LiteralCommand[] }
  | { readonly ok: false; readonly reason: string };

type Operator = ";" | "&&" | "||" | "|" | "|&" | "\n";
type Token = { readonly word: string } | { readonly operator: Operator };

class Refused extends Error {}

/** Characters that end or change a word when unquoted (bash's metacharacters and expansions). */
const REFUSED_UNQUOTED: Readonly<Record<string, string>> = {
  "<": "a redirection",
  ">": "a redirection",
  "(": "a subshell or function",
  ")": "a subshell or function",
  "$": "an expansion ($)",
  "`": "a command substitution (`)",
  "*": "a glob (*)",
  "?": "a glob (?)",
  "[": "a glob ([)",
  "]": "a glob (])",
  "{": "a brace expansion or group ({)",
  "}": "a brace expansion or group (})",
  "~": "a tilde expansion (~)",
};

function describeCharacter(c: string): string {
  const code = c.codePointAt(0)!;
  return `U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
}

/** Printable ASCII: the only characters taken as themselves everywhere. */
function isPrintableAscii(code: number): boolean {
  return code >= 0x20 && code <= 0x7e;
}

/** A character allowed inside quotes: printable ASCII, tab, or a whole non-ASCII code point. */
function checkQuotedCharacter(line: string, i: number): number {
  const code = line.charCodeAt(i);
  if (isPrintableAscii(code) || code === 0x09) return 1;
  if (code === 0x0a) throw new Refused("a newline inside quotes");
  // What is left below U+00A0: ASCII controls, DEL and the C1 controls.
  if (code <= 0x9f) {
    throw new Refused(`the control character ${describeCharacter(line[i])}`);
  }
  if (code >= 0xd800 && code <= 0xdbff) {
    const low = line.charCodeAt(i + 1);
    if (low >= 0xdc00 && low <= 0xdfff) return 2;
  }
  if (code >= 0xd800 && code <= 0xdfff) throw new Refused("an unpaired surrogate");
  // Line and paragraph separators and the like are refused: they show as line breaks.
  if (code === 0x2028 || code === 0x2029 || code === 0xfeff) {
    throw new Refused(`the character ${describeCharacter(line[i])}`);
  }
  return 1;
}

function tokenize(line: string): Token[] {
  const tokens: Token[] = [];
  let word = "";
  // A word exists once any character or quote of it is read (`''` is an empty word).
  let inWord = false;
  const endWord = () => {
    if (inWord) tokens.push({ word });
    word = "";
    inWord = false;
  };
  let i = 0;
  while (i < line.length) {
    const c = line[i];
    const code = line.charCodeAt(i);
    if (c === " " || c === "\t") {
      endWord();
      i++;
    } else if (c === "\n") {
      endWord();
      tokens.push({ operator: "\n" });
      i++;
    } else if (c === ";") {
      if (line[i + 1] === ";" || line[i + 1] === "&") throw new Refused("a case terminator");
      endWord();
      tokens.push({ operator: ";" });
      i++;
    } else if (c === "&") {
      if (line[i + 1] !== "&") throw new Refused("a background job or redirection (&)");
      endWord();
      tokens.push({ operator: "&&" });
      i += 2;
    } else if (c === "|") {
      endWord();
      const next = line[i + 1];
      if (next === "|") tokens.push({ operator: "||" });
      else if (next === "&") tokens.push({ operator: "|&" });
      else tokens.push({ operator: "|" });
      i += next === "|" || next === "&" ? 2 : 1;
    } else if (c === "#" && !inWord) {
      throw new Refused("a comment");
    } else if (c === "\\") {
      const next = line.charCodeAt(i + 1);
      if (Number.isNaN(next)) throw new Refused("a trailing backslash");
      if (next === 0x0a) throw new Refused("a backslash-newline continuation");
      if (!isPrintableAscii(next)) {
        throw new Refused(`a backslash before ${describeCharacter(line[i + 1])}`);
      }
      word += line[i + 1];
      inWord = true;
      i += 2;
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end === -1) throw new Refused("an unterminated single quote");
      for (let j = i + 1; j < end;) j += checkQuotedCharacter(line, j);
      word += line.slice(i + 1, end);
      inWord = true;
      i = end + 1;
    } else if (c === '"') {
      let j = i + 1;
      let sawNonAscii = false;
      let sawBackslash = false;
      for (;;) {
        if (j >= line.length) throw new Refused("an unterminated double quote");
        const q = line[j];
        if (q === '"') break;
        if (q === "$") throw new Refused("an expansion ($) inside double quotes");
        if (q === "`") throw new Refused("a command substitution (`) inside double quotes");
        if (q === "\\") {
          sawBackslash = true;
          const next = line.charCodeAt(j + 1);
          if (next === 0x0a) throw new Refused("a backslash-newline continuation");
          if (!isPrintableAscii(next)) throw new Refused("a backslash before a non-printable");
          // Inside double quotes a backslash escapes only $ ` " \; before anything else it stays.
          const escaped = line[j + 1];
          word += '$`"\\'.includes(escaped) ? escaped : "\\" + escaped;
          j += 2;
          continue;
        }
        const width = checkQuotedCharacter(line, j);
        if (line.charCodeAt(j) >= 0x80) sawNonAscii = true;
        word += line.slice(j, j + width);
        j += width;
      }
      // A multibyte locale other than UTF-8 can read a non-ASCII byte and the backslash
      // after it as one character; the two together are refused rather than reasoned about.
      if (sawNonAscii && sawBackslash) {
        throw new Refused("a backslash and a non-ASCII character in one double-quoted string");
      }
      inWord = true;
      i = j + 1;
    } else if (Object.hasOwn(REFUSED_UNQUOTED, c)) {
      throw new Refused(REFUSED_UNQUOTED[c]);
    } else if (isPrintableAscii(code)) {
      word += c;
      inWord = true;
      i++;
    } else if (code >= 0x80) {
      throw new Refused(`the non-ASCII character ${describeCharacter(line[i])} outside quotes`);
    } else {
      throw new Refused(`the control character ${describeCharacter(c)}`);
    }
  }
  endWord();
  return tokens;
}

/**
 * Parses a command line into simple literal commands joined by `;`, `&&`,
 * `||`, `|`, `|&` and newlines, exactly as bash reads it, or says why the
 * line is outside the subset this proves (see the module doc).
 *
 * @example
 * ```ts
 * import { parseLiteralCommands } from "./shell_lexer.ts";
 * parseLiteralCommands("ls -la 'a b' | wc -l");
 * // { ok: true, commands: [{ words: ["ls", "-la", "a b"] }, { words: ["wc", "-l"] }] }
 * ```
 */
export function parseLiteralCommands(line: string): ParsedLine {
  let tokens: Token[];
  try {
    tokens = tokenize(line);
  } catch (error) {
    if (error instanceof Refused) return { ok: false, reason: `it contains ${error.message}` };
    throw error;
  }
  const commands: LiteralCommand[] = [];
  let words: string[] = [];
  // What may come next: after `&&`, `||`, `|` and `|&` a command must follow (newlines may come
  // first); after `;` or a newline, another command or the end.
  let needCommand = false;
  for (const token of tokens) {
    if ("word" in token) {
      words.push(token.word);
      continue;
    }
    const operator = token.operator;
    if (words.length > 0) {
      commands.push({ words });
      words = [];
      needCommand = operator !== ";" && operator !== "\n";
      continue;
    }
    if (operator === "\n") continue; // blank lines, and newlines after `&&`, `||`, `|`
    return {
      ok: false,
      reason: `it contains ${JSON.stringify(operator)} where bash needs a command`,
    };
  }
  if (words.length > 0) commands.push({ words });
  else if (needCommand) return { ok: false, reason: "it ends where bash needs a command" };
  if (commands.length === 0) return { ok: false, reason: "no command" };
  return { ok: true, commands };
}
