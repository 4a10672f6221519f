/**
 * Rows of a data-driven run: a CSV file with a header row, or a JSON array of flat objects. Each row
 * becomes the initial variables of one run of the test. `vigil run --data` and the API's batch
 * trigger both read files through here. Pure: text in, rows out, or an error naming the row.
 */
import { CsvError, parse } from 'csv-parse/sync';
import { VARIABLE_NAME_PATTERN } from './assertions.js';

export const DATA_FORMATS = ['csv', 'json'] as const;
export type DataFormat = (typeof DATA_FORMATS)[number];

export type DataRow = Record<string, string>;

/** Why a data file cannot be used; the message names the row (counted from 1) or line. */
export class DataRowsError extends Error {}

const NAME = new RegExp(VARIABLE_NAME_PATTERN);

/** The format a file name's extension says, or null. */
export function dataFormatOf(fileName: string): DataFormat | null {
  const extension = /\.([a-z]+)$/i.exec(fileName)?.[1]?.toLowerCase();
  return extension === 'csv' || extension === 'json' ? extension : null;
}

/** The rows of `text`: at least one, at most `maxRows`; every column a variable name. */
export function parseDataRows(text: string, format: DataFormat, options: { maxRows: number }): DataRow[] {
  return format === 'csv' ? checkCount(csvRows(text), options) : dataRowsOf(parseJson(text), options);
}

/** The rows of a parsed JSON document: an array of flat objects. */
export function dataRowsOf(document: unknown, options: { maxRows: number }): DataRow[] {
  if (!Array.isArray(document)) throw new DataRowsError('the document must be a JSON array of objects');
  return checkCount(document.map(rowOf), options);
}

function checkCount(rows: DataRow[], options: { maxRows: number }): DataRow[] {
  if (rows.length === 0) throw new DataRowsError('there are no rows');
  if (rows.length > options.maxRows) {
    throw new DataRowsError(`${rows.length} rows, more than the ${options.maxRows} allowed`);
  }
  return rows;
}

function csvRows(text: string): DataRow[] {
  try {
    return parse(text, {
      bom: true,
      skip_empty_lines: true,
      columns: (header: string[]) => {
        const seen = new Set<string>();
        for (const [index, name] of header.entries()) {
          checkName(name, `the header row, column ${index + 1}`);
          if (seen.has(name)) throw new DataRowsError(`the header row names column "${name}" twice`);
          seen.add(name);
        }
        return header;
      },
    }) as DataRow[];
  } catch (error) {
    if (error instanceof DataRowsError) throw error;
    if (error instanceof CsvError) {
      // csv-parse counts lines with the header; a data row is the record after it.
      const record = typeof error.records === 'number' ? error.records + 1 : null;
      const where = record === null ? '' : `row ${record}: `;
      throw new DataRowsError(`${where}${error.message.replace(/^Invalid Record Length: /, '')}`);
    }
    throw error;
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text.replace(/^\uFEFF/, '')) as unknown;
  } catch (error) {
    throw new DataRowsError(`not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function rowOf(item: unknown, index: number): DataRow {
  const row = index + 1;
  if (typeof item !== 'object' || item === null || Array.isArray(item)) {
    throw new DataRowsError(`row ${row}: must be an object of column names to values`);
  }
  const values: DataRow = {};
  for (const [name, value] of Object.entries(item)) {
    checkName(name, `row ${row}`);
    if (value === null) values[name] = '';
    else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      values[name] = String(value);
    } else {
      throw new DataRowsError(`row ${row}: column "${name}" must be a string, number, boolean or null`);
    }
  }
  return values;
}

function checkName(name: string, where: string): void {
  if (!NAME.test(name)) {
    throw new DataRowsError(
      `${where}: "${name}" is not a variable name (letters, digits, _ . - and not starting with a digit)`,
    );
  }
}
