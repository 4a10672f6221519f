import {
  addHeader,
  type ImportedRequestStep,
  type ImportResult,
  isHeaderName,
  stepNote,
  testName,
} from './result.js';

/**
 * cURL command lines → one test with a request step per command, as browsers copy them: the bash
 * form (`'…'`, `$'…'`, `\` line ends) and the Windows cmd form (`^"…^"`, `^` escapes and line
 * ends). Several commands may follow one another (separated by `;`, `&&` or `&`, or one per line).
 */

const SEPARATORS = new Set([';', '&&', '&', '||', '|']);

/** Whether the text reads as the cmd form: carets before quotes or at line ends. */
export function isCmdForm(text: string): boolean {
  return /\^"|\^\r?\n/.test(text);
}

/** Words of a bash command line; unquoted `;`, `&&`, `&`, `|` and line breaks between commands are their own words. */
export function bashWords(text: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  const end = () => {
    if (inWord) words.push(word);
    word = '';
    inWord = false;
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '\\') {
      const next = text[i + 1];
      if (next === '\n') i += 2;
      else if (next === '\r' && text[i + 2] === '\n') i += 3;
      else {
        if (next !== undefined) word += next;
        inWord = true;
        i += 2;
      }
      continue;
    }
    if (c === "'") {
      const close = text.indexOf("'", i + 1);
      const stop = close === -1 ? text.length : close;
      word += text.slice(i + 1, stop);
      inWord = true;
      i = stop + 1;
      continue;
    }
    if (c === '$' && text[i + 1] === "'") {
      const { value, next } = ansiC(text, i + 2);
      word += value;
      inWord = true;
      i = next;
      continue;
    }
    if (c === '"') {
      i += 1;
      while (i < text.length && text[i] !== '"') {
        if (text[i] === '\\' && '\\"$`\n'.includes(text[i + 1] ?? '')) {
          if (text[i + 1] !== '\n') word += text[i + 1];
          i += 2;
        } else {
          word += text[i];
          i += 1;
        }
      }
      inWord = true;
      i += 1;
      continue;
    }
    if (c === '\n' || c === ';' || c === '&' || c === '|') {
      end();
      const two = text.slice(i, i + 2);
      const op = two === '&&' || two === '||' ? two : c === '\n' ? ';' : c;
      words.push(op);
      i += op.length === 2 ? 2 : 1;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r') {
      end();
      i += 1;
      continue;
    }
    if (c === '#' && !inWord) {
      while (i < text.length && text[i] !== '\n') i += 1;
      continue;
    }
    word += c;
    inWord = true;
    i += 1;
  }
  end();
  return words;
}

/** The value of a `$'…'` string starting after its opening quote. */
function ansiC(text: string, start: number): { value: string; next: number } {
  let value = '';
  let i = start;
  const simple: Record<string, string> = {
    n: '\n',
    t: '\t',
    r: '\r',
    a: '\x07',
    b: '\b',
    e: '\x1b',
    E: '\x1b',
    f: '\f',
    v: '\v',
    '\\': '\\',
    "'": "'",
    '"': '"',
    '?': '?',
  };
  while (i < text.length && text[i] !== "'") {
    if (text[i] !== '\\') {
      value += text[i];
      i += 1;
      continue;
    }
    const e = text[i + 1] ?? '';
    if (e in simple) {
      value += simple[e];
      i += 2;
      continue;
    }
    const hex =
      e === 'x'
        ? /^[0-9A-Fa-f]{1,2}/
        : e === 'u'
          ? /^[0-9A-Fa-f]{1,4}/
          : e === 'U'
            ? /^[0-9A-Fa-f]{1,8}/
            : null;
    if (hex) {
      const digits = hex.exec(text.slice(i + 2))?.[0] ?? '';
      const code = digits ? Number.parseInt(digits, 16) : Number.NaN;
      value += Number.isFinite(code) && code <= 0x10ffff ? String.fromCodePoint(code) : `\\${e}`;
      i += 2 + digits.length;
      continue;
    }
    const octal = /^[0-7]{1,3}/.exec(text.slice(i + 1))?.[0];
    if (octal) {
      value += String.fromCharCode(Number.parseInt(octal, 8) & 0xff);
      i += 1 + octal.length;
      continue;
    }
    value += `\\${e}`;
    i += 2;
  }
  return { value, next: i + 1 };
}

/**
 * Words of a Windows cmd command line as a browser writes it: first cmd.exe's pass (`^x` is x, `^`
 * before a line break continues the line, `^` + two line breaks is one line break), then the C
 * runtime's splitting (double quotes group, `\"` is a quote, backslashes double before quotes).
 */
export function cmdWords(text: string): string[] {
  // cmd.exe: carets escape the next character. Unescaped `&` separates commands.
  let line = '';
  const SEP = '\u0000';
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i]!;
    if (c === '^') {
      let j = i + 1;
      if (text[j] === '\r') j += 1;
      if (text[j] === '\n') {
        // A continuation; a line break right after it is the escaped (kept) one.
        if (text[j + 1] === '\r') j += 1;
        if (text[j + 1] === '\n') {
          line += '\n';
          j += 1;
        }
        i = j;
        continue;
      }
      if (j < text.length) line += text[j];
      i = j;
      continue;
    }
    if (c === '&') {
      line += SEP;
      if (text[i + 1] === '&') i += 1;
      continue;
    }
    line += c === '\r' ? '' : c === '\n' ? SEP : c;
  }
  // MS C runtime argument splitting.
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quoted = false;
  for (let i = 0; i < line.length; i += 1) {
    const c = line[i]!;
    if (c === '\\') {
      let n = 0;
      while (line[i + n] === '\\') n += 1;
      if (line[i + n] === '"') {
        word += '\\'.repeat(Math.floor(n / 2));
        if (n % 2 === 1) word += '"';
        else quoted = !quoted;
        i += n;
      } else {
        word += '\\'.repeat(n);
        i += n - 1;
      }
      inWord = true;
      continue;
    }
    if (c === '"') {
      if (quoted && line[i + 1] === '"') {
        word += '"';
        i += 1;
      } else quoted = !quoted;
      inWord = true;
      continue;
    }
    if (!quoted && (c === ' ' || c === '\t' || c === SEP)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      if (c === SEP) words.push(';');
      continue;
    }
    word += c;
    inWord = true;
  }
  if (inWord) words.push(word);
  return words;
}

/** Options of curl that take a value, and those that do not (listed to skip them quietly). */
const IGNORED_FLAGS = new Set([
  '--compressed',
  '-s',
  '--silent',
  '-S',
  '--show-error',
  '-L',
  '--location',
  '-v',
  '--verbose',
  '-i',
  '--include',
  '-g',
  '--globoff',
  '--http1.1',
  '--http2',
  '--http2-prior-knowledge',
  '-f',
  '--fail',
  '--no-buffer',
  '-N',
  '--path-as-is',
]);
const IGNORED_WITH_VALUE = new Set([
  '-o',
  '--output',
  '--connect-timeout',
  '-m',
  '--max-time',
  '--retry',
  '-w',
  '--write-out',
  '--max-redirs',
]);

interface ParsedCommand {
  step: ImportedRequestStep;
}

/** One curl command (its words after `curl`) as a request step. */
function commandStep(words: readonly string[], index: number): ParsedCommand {
  const remarks: string[] = [];
  const headers: Record<string, string[]> = {};
  const data: string[] = [];
  const form: Record<string, string[]> = {};
  let method: string | undefined;
  let url: string | undefined;
  let get = false;
  let head = false;
  let auth: ImportedRequestStep['auth'];
  let i = 0;
  const value = (flag: string): string => {
    i += 1;
    if (i >= words.length) {
      remarks.push(`${flag} has no value`);
      return '';
    }
    return words[i]!;
  };
  for (; i < words.length; i += 1) {
    let word = words[i]!;
    // `--header=value` and `-XPOST` forms.
    let inline: string | undefined;
    if (word.startsWith('--') && word.includes('=')) {
      inline = word.slice(word.indexOf('=') + 1);
      word = word.slice(0, word.indexOf('='));
    } else if (/^-[XHdbuAeFo]./.test(word)) {
      inline = word.slice(2);
      word = word.slice(0, 2);
    }
    const take = (flag: string) => (inline !== undefined ? inline : value(flag));
    switch (word) {
      case '-X':
      case '--request':
        method = take(word).toUpperCase();
        break;
      case '-H':
      case '--header': {
        const header = take(word);
        const colon = header.indexOf(':');
        const name = colon > 0 ? header.slice(0, colon).trim() : '';
        if (!name || !isHeaderName(name))
          remarks.push(`header "${header.slice(0, 80)}" dropped (no valid name)`);
        else if (header.slice(colon + 1).trim() !== '')
          addHeader(headers, name, header.slice(colon + 1).trim());
        break;
      }
      case '-A':
      case '--user-agent':
        addHeader(headers, 'User-Agent', take(word));
        break;
      case '-e':
      case '--referer':
        addHeader(headers, 'Referer', take(word));
        break;
      case '-b':
      case '--cookie': {
        const cookie = take(word);
        if (cookie.includes('=')) addHeader(headers, 'Cookie', cookie);
        else remarks.push(`cookie file "${cookie}" not read`);
        break;
      }
      case '-d':
      case '--data':
      case '--data-ascii':
      case '--data-raw':
      case '--data-binary': {
        const d = take(word);
        if (d.startsWith('@') && word !== '--data-raw') remarks.push(`${word} ${d}: file content not read`);
        else data.push(d);
        break;
      }
      case '--data-urlencode': {
        const d = take(word);
        const eq = d.indexOf('=');
        if (d.startsWith('@') || (eq > 0 && d[eq + 1] === '@'))
          remarks.push(`${word} ${d}: file content not read`);
        else if (eq === -1) data.push(encodeURIComponent(d));
        else data.push(`${d.slice(0, eq)}${eq > 0 ? '=' : ''}${encodeURIComponent(d.slice(eq + 1))}`);
        break;
      }
      case '--json': {
        data.push(take(word));
        if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
          addHeader(headers, 'Content-Type', 'application/json');
        break;
      }
      case '-F':
      case '--form':
      case '--form-string': {
        const field = take(word);
        const eq = field.indexOf('=');
        if (eq <= 0) {
          remarks.push(`form field "${field.slice(0, 80)}" dropped (no name)`);
          break;
        }
        const name = field.slice(0, eq);
        const v = field.slice(eq + 1);
        if (word !== '--form-string' && (v.startsWith('@') || v.startsWith('<'))) {
          remarks.push(`form field "${name}" is a file (${v}): sent as its name`);
        }
        (form[name] ??= []).push(v);
        break;
      }
      case '-u':
      case '--user': {
        const user = take(word);
        const colon = user.indexOf(':');
        auth = {
          auth_type: 'basic',
          username: colon === -1 ? user : user.slice(0, colon),
          password: colon === -1 ? '' : user.slice(colon + 1),
        };
        break;
      }
      case '-G':
      case '--get':
        get = true;
        break;
      case '-I':
      case '--head':
        head = true;
        break;
      case '--url':
        url = take(word);
        break;
      case '-k':
      case '--insecure':
        remarks.push('--insecure: turn off "verify SSL" in the environment if the server needs it');
        break;
      default:
        if (IGNORED_FLAGS.has(word)) break;
        if (IGNORED_WITH_VALUE.has(word)) {
          take(word);
          break;
        }
        if (word.startsWith('-') && word.length > 1) remarks.push(`option ${word} ignored`);
        else if (url === undefined) url = word;
        else remarks.push(`extra argument "${word.slice(0, 80)}" ignored`);
    }
  }
  if (url === undefined) {
    remarks.push('no URL');
    url = '';
  }
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(url) && url !== '' && !url.startsWith('{{')) url = `http://${url}`;
  const step: ImportedRequestStep = { step_type: 'request', method: 'GET', url, headers };
  if (get && data.length) {
    step.url = `${url}${url.includes('?') ? '&' : '?'}${data.join('&')}`;
  } else if (data.length) {
    step.body = data.join('&');
    if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
      addHeader(headers, 'Content-Type', 'application/x-www-form-urlencoded');
  }
  if (Object.keys(form).length) {
    step.form = Object.fromEntries(Object.entries(form).map(([k, v]) => [k, v.length === 1 ? v[0]! : v]));
    if (data.length) remarks.push('both -d and -F given: the form is sent');
  }
  step.method = method ?? (head ? 'HEAD' : (data.length && !get) || step.form ? 'POST' : 'GET');
  if (!/^[A-Za-z]{1,20}$/.test(step.method)) {
    remarks.push(`method "${step.method.slice(0, 40)}" replaced by GET`);
    step.method = 'GET';
  }
  if (auth) step.auth = auth;
  step.assertions = [{ source: 'response_status', comparison: 'is_less_than', value: 400 }];
  step.note = stepNote(`Command ${index + 1}`, remarks);
  return { step };
}

/** Parses one or several curl command lines. */
export function importCurl(text: string): ImportResult {
  const words = isCmdForm(text) ? cmdWords(text) : bashWords(text);
  const commands: string[][] = [];
  let current: string[] | null = null;
  for (const word of words) {
    if (SEPARATORS.has(word)) {
      current = null;
      continue;
    }
    if (current === null) {
      if (word === 'curl' || word.endsWith('/curl') || word.toLowerCase() === 'curl.exe') {
        current = [];
        commands.push(current);
      }
      continue;
    }
    current.push(word);
  }
  if (commands.length === 0) return { tests: [], notes: ['no curl command found'] };
  const steps = commands.map((c, i) => commandStep(c, i).step);
  const first = steps[0]!.url.replace(/^[a-z]+:\/\//i, '').split(/[?#]/)[0] ?? '';
  return {
    tests: [{ name: testName(`cURL ${steps[0]!.method} ${first}`, 'cURL import'), steps }],
    notes: [],
  };
}
