// RFC 4180 CSV: fields separated by commas, optionally in double quotes (a quote inside is
// doubled; a quoted field may hold commas and line breaks), records ended by CRLF or LF. A
// leading byte-order mark is dropped; blank lines are skipped.

export class CsvError extends Error {}

export function parseCsv(text: string): string[][] {
  const input = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  let line = 1;
  let fieldStarted = false;
  const endRecord = () => {
    record.push(field);
    if (record.length > 1 || record[0] !== '') records.push(record);
    record = [];
    field = '';
    fieldStarted = false;
  };
  for (let i = 0; i < input.length; i++) {
    const char = input[i]!;
    if (quoted) {
      if (char === '"') {
        if (input[i + 1] === '"') {
          field += '"';
          i++;
        } else {
          quoted = false;
        }
      } else {
        if (char === '\n') line++;
        field += char;
      }
      continue;
    }
    if (char === '"') {
      if (fieldStarted) throw new CsvError(`line ${line}: a quote inside an unquoted field`);
      quoted = true;
      fieldStarted = true;
    } else if (char === ',') {
      record.push(field);
      field = '';
      fieldStarted = false;
    } else if (char === '\n' || char === '\r') {
      if (char === '\r' && input[i + 1] === '\n') i++;
      endRecord();
      line++;
    } else {
      field += char;
      fieldStarted = true;
    }
  }
  if (quoted) throw new CsvError(`line ${line}: a quoted field is not closed`);
  if (field !== '' || record.length > 0) endRecord();
  return records;
}
