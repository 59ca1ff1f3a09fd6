// @ts-check
// The simple commands of a POSIX shell's command string (`sh -c "<string>"`), as words with their
// quotes removed: enough to tell which programs a shell string starts (shared-python.mjs), never
// to run it. One pass over the string, so linear on hostile input. The Python hook has the same
// lexer (sandbox/python/_tapedeck_values.py _shell_commands): keep the two alike.

const BREAKS = new Set([';', '&', '|', '\n']);
const BLANKS = new Set([' ', '\t', '\r']);
const IN_DOUBLE_ESCAPES = new Set(['$', '`', '"', '\\', '\n']);

/**
 * The simple commands of `script`, each its words (quotes and backslashes removed). Commands are
 * split at `;`, `&`, `|`, newlines, `(` and `)`; a command substitution's commands (`$(…)`, `` `…` ``,
 * in double quotes too) come before the command they are in, which keeps a placeholder word;
 * redirections (`>f`, `2>&1`, `<<EOF` and its body) and comments are dropped; `${…}` is kept as written.
 * An unterminated quote runs to the end. Example: `cd /x && A="1 2" python3 -S 'a b.py' >log`
 * gives [['cd', '/x'], ['A=1 2', 'python3', '-S', 'a b.py']].
 * @param {string} script
 * @returns {string[][]}
 */
export function shellCommands(script) {
  const s = String(script);
  const n = s.length;
  /** @type {string[][]} */
  const commands = [];
  /** @type {Array<{ words: string[], word: string, inWord: boolean, inDouble: boolean, closer: string, depth: number, redirect: string }>} */
  const outer = [];
  /** @type {string[]} */
  let words = [];
  let word = '';
  let inWord = false;
  let inDouble = false;
  // What closes the substitution being read (')' or '`'), '' at the top; `(` nesting inside it.
  let closer = '';
  let depth = 0;
  // The operator whose target the next word is ('' when none): '<<' and '<<-' name a here-document.
  let redirect = '';
  /** @type {Array<{ delimiter: string, tabs: boolean }>} */
  let heredocs = [];

  const endWord = () => {
    if (inWord) {
      if (redirect === '') words.push(word);
      else {
        if (redirect.startsWith('<<')) heredocs.push({ delimiter: word, tabs: redirect === '<<-' });
        redirect = '';
      }
    }
    word = '';
    inWord = false;
  };
  const endCommand = () => {
    endWord();
    if (words.length > 0) commands.push(words);
    words = [];
    redirect = '';
  };
  const open = (/** @type {string} */ close) => {
    outer.push({ words, word, inWord, inDouble, closer, depth, redirect });
    words = [];
    word = '';
    inWord = false;
    inDouble = false;
    closer = close;
    depth = 0;
    redirect = '';
  };
  const close = () => {
    endCommand();
    const back = /** @type {(typeof outer)[number]} */ (outer.pop());
    ({ words, word, inDouble, closer, depth, redirect } = back);
    // The substitution's value stands in the word it was in.
    word += '$()';
    inWord = true;
  };
  /** Skips the bodies of the here-documents named on the line just ended; `i` is past its newline. */
  const skipHeredocs = (/** @type {number} */ i) => {
    for (const { delimiter, tabs } of heredocs) {
      while (i < n) {
        const end = s.indexOf('\n', i);
        const line = s.slice(i, end === -1 ? n : end);
        i = end === -1 ? n : end + 1;
        if ((tabs ? line.replace(/^\t+/, '') : line) === delimiter) break;
      }
    }
    heredocs = [];
    return i;
  };

  let i = 0;
  while (i < n) {
    const c = /** @type {string} */ (s[i]);
    if (inDouble) {
      if (c === '"') {
        inDouble = false;
        i++;
      } else if (c === '\\' && i + 1 < n && IN_DOUBLE_ESCAPES.has(/** @type {string} */ (s[i + 1]))) {
        if (s[i + 1] !== '\n') word += s[i + 1];
        i += 2;
      } else if (c === '$' && s[i + 1] === '(') {
        open(')');
        i += 2;
      } else if (c === '`') {
        open('`');
        i++;
      } else {
        word += c;
        i++;
      }
      continue;
    }
    if (c === '\\') {
      if (i + 1 < n && s[i + 1] !== '\n') {
        word += s[i + 1];
        inWord = true;
      }
      i += 2;
    } else if (c === "'") {
      const end = s.indexOf("'", i + 1);
      word += s.slice(i + 1, end === -1 ? n : end);
      inWord = true;
      i = end === -1 ? n : end + 1;
    } else if (c === '"') {
      inDouble = true;
      inWord = true;
      i++;
    } else if (c === '$' && s[i + 1] === '(') {
      open(')');
      i += 2;
    } else if (c === '$' && s[i + 1] === '{') {
      const end = s.indexOf('}', i + 2);
      word += s.slice(i, end === -1 ? n : end + 1);
      inWord = true;
      i = end === -1 ? n : end + 1;
    } else if (c === '`') {
      if (closer === '`') close();
      else open('`');
      i++;
    } else if (c === '(') {
      endCommand();
      if (closer === ')') depth++;
      i++;
    } else if (c === ')') {
      if (closer === ')' && depth === 0) close();
      else {
        endCommand();
        if (depth > 0) depth--;
      }
      i++;
    } else if (c === '#' && !inWord) {
      const end = s.indexOf('\n', i);
      i = end === -1 ? n : end;
    } else if (c === '\n') {
      endCommand();
      i = heredocs.length > 0 ? skipHeredocs(i + 1) : i + 1;
    } else if (BREAKS.has(c)) {
      endCommand();
      i++;
    } else if (c === '<' || c === '>') {
      // A word of digits right before the operator is its file descriptor (2>&1), not an argument.
      if (inWord && /^\d+$/.test(word) && s[i - 1] !== '"' && s[i - 1] !== "'") {
        word = '';
        inWord = false;
      }
      endWord();
      let op = c;
      i++;
      const next = s[i];
      if (next === c || next === '&' || next === '|' || (c === '<' && next === '>')) {
        op += next;
        i++;
        if (op === '<<' && s[i] === '-') {
          op += '-';
          i++;
        }
      }
      redirect = op;
    } else if (BLANKS.has(c)) {
      endWord();
      i++;
    } else {
      word += c;
      inWord = true;
      i++;
    }
  }
  while (outer.length > 0) close();
  endCommand();
  return commands;
}
