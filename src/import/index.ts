import { parse as parseYaml } from 'yaml';
import { invalid } from '../domain/errors.js';
import { importCurl, isCmdForm } from './curl.js';
import { IMPORT_FORMATS, type ImportFormat, SPLITS } from './formats.js';
import { importOpenApi, isOpenApi } from './openapi.js';
import { importPostman, isPostmanCollection } from './postman.js';
import { type ImportedTest, type ImportResult, isRecord, withinStepLimit } from './result.js';
import { exchangesFromHar, importExchanges, isHar } from './traffic.js';

/**
 * Files from other tools → Vigil tests. Each format has its own module with one pure function from
 * the file to `{tests, notes}`; this one recognises the format and passes the options on.
 */

export { IMPORT_FORMATS, SPLITS };
export type { ImportFormat };

export interface ImportOptions {
  /** Postman: `folder` (default) or `request`; OpenAPI: `tag` (default) or `operation`. */
  split?: (typeof SPLITS)[number] | undefined;
  /** HAR: turn values an answer produced and a later request sends into variables. */
  chain?: boolean | undefined;
  /** OpenAPI: the `base_url` of the environment instead of the document's server. */
  base_url?: string | undefined;
  /** Postman: an exported environment. */
  environment?: unknown;
}

type Parsed = { kind: 'text'; text: string } | { kind: 'doc'; doc: unknown };

/** The file as a document (JSON or YAML) or, for command lines, as text. */
function read(content: unknown, format: ImportFormat | undefined): Parsed {
  if (typeof content !== 'string') return { kind: 'doc', doc: content };
  const text = content.replace(/^\uFEFF/, '').trim();
  if (format === 'curl' || (format === undefined && /^(curl|curl\.exe)(\s|\^)/i.test(text)))
    return { kind: 'text', text };
  if (text.startsWith('{') || text.startsWith('[')) {
    try {
      return { kind: 'doc', doc: JSON.parse(text) };
    } catch (error) {
      if (format !== 'openapi')
        throw invalid('/content', `is not valid JSON (${(error as Error).message.slice(0, 200)})`);
    }
  }
  try {
    return { kind: 'doc', doc: parseYaml(text, { maxAliasCount: 100, prettyErrors: false }) };
  } catch (error) {
    throw invalid(
      '/content',
      `is neither JSON, YAML nor a curl command (${(error as Error).message.slice(0, 200)})`,
    );
  }
}

function isRunscope(doc: unknown): boolean {
  const one = (d: unknown) =>
    isRecord(d) && typeof d.name === 'string' && (Array.isArray(d.steps) || 'vigil_export_version' in d);
  return Array.isArray(doc) ? doc.length > 0 && doc.every(one) : one(doc);
}

/** The format of a parsed file; undefined when it is none of the known ones. */
function sniff(parsed: Parsed): ImportFormat | undefined {
  if (parsed.kind === 'text') return 'curl';
  const { doc } = parsed;
  if (isPostmanCollection(doc)) return 'postman';
  if (isOpenApi(doc)) return 'openapi';
  if (isHar(doc)) return 'har';
  if (isRunscope(doc)) return 'runscope';
  return undefined;
}

/** What a file would become; throws a validation error naming `/content` or `/options/…`. */
export function importFile(
  content: unknown,
  format: ImportFormat | undefined,
  options: ImportOptions = {},
): ImportResult & { format: ImportFormat } {
  const parsed = read(content, format);
  const detected = format ?? sniff(parsed);
  if (!detected)
    throw invalid(
      '/content',
      'is not a recognised file: expected a Postman collection, an OpenAPI or Swagger document, a HAR file, a curl command or a Vigil/Runscope test export',
    );
  const split = options.split;
  const splitFits = (allowed: readonly string[]) => {
    if (split !== undefined && !allowed.includes(split))
      throw invalid('/options/split', `must be one of: ${allowed.join(', ')} for ${detected}`);
  };
  let result: ImportResult;
  switch (detected) {
    case 'postman':
      splitFits(['folder', 'request']);
      if (parsed.kind !== 'doc' || !isPostmanCollection(parsed.doc))
        throw invalid('/content', 'is not a Postman collection');
      result = importPostman(parsed.doc, {
        split: split as 'folder' | 'request' | undefined,
        environment: options.environment,
      });
      break;
    case 'openapi':
      splitFits(['tag', 'operation']);
      if (parsed.kind !== 'doc' || !isOpenApi(parsed.doc))
        throw invalid('/content', 'is not an OpenAPI 3 or Swagger 2.0 document');
      result = importOpenApi(parsed.doc, {
        split: split as 'tag' | 'operation' | undefined,
        ...(options.base_url !== undefined && { base_url: options.base_url }),
      });
      break;
    case 'curl': {
      splitFits([]);
      const text = parsed.kind === 'text' ? parsed.text : typeof content === 'string' ? content : '';
      if (!/^\s*(\S*curl(\.exe)?)(\s|\^)/i.test(text) && !isCmdForm(text))
        throw invalid('/content', 'is not a curl command');
      result = importCurl(text);
      break;
    }
    case 'har':
      splitFits([]);
      if (parsed.kind !== 'doc' || !isHar(parsed.doc))
        throw invalid('/content', 'is not a HAR file (no log.entries)');
      result = importExchanges(exchangesFromHar(parsed.doc), { chain: options.chain ?? false });
      break;
    case 'runscope':
      splitFits([]);
      if (parsed.kind !== 'doc' || !isRunscope(parsed.doc))
        throw invalid('/content', 'is not a Vigil or Runscope test export');
      result = {
        tests: (Array.isArray(parsed.doc) ? parsed.doc : [parsed.doc]) as ImportedTest[],
        notes: [],
      };
      break;
  }
  if (result.tests.length === 0)
    throw invalid(
      '/content',
      `holds nothing to import${result.notes.length ? ` (${result.notes.join('; ')})` : ''}`,
    );
  return { format: detected, tests: withinStepLimit(result.tests), notes: result.notes };
}
