// A CSV reader for the rate card files: RFC 4180 as spreadsheets write it — fields separated by
// commas, a field in double quotes may hold commas, new lines and "" for a quote. Each row says
// the line it starts on, so a mistake can be named. A line starting with # is a comment (svc's
// own layout allows them), read as blank.

export interface CsvRow {
  /** 1-based line of the file where the row starts. */
  line: number;
  fields: string[];
}

/** The file's rows, fields trimmed; blank rows are left out. */
export function csvRows(text: string): CsvRow[] {
  const rows: CsvRow[] = [];
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  let line = 1;
  let rowLine = 1;
  const endRow = () => {
    fields.push(field.trim());
    if (fields.some((value) => value !== '')) rows.push({ line: rowLine, fields });
    fields = [];
    field = '';
  };
  const source = text
    .replace(/^\uFEFF/, '')
    .split('\n')
    .map((content) => (content.trimStart().startsWith('#') ? '' : content))
    .join('\n');
  for (let i = 0; i < source.length; i++) {
    const char = source[i]!;
    if (quoted) {
      if (char === '"' && source[i + 1] === '"') {
        field += '"';
        i++;
      } else if (char === '"') quoted = false;
      else {
        if (char === '\n') line++;
        field += char;
      }
    } else if (char === '"') quoted = true;
    else if (char === ',') {
      fields.push(field.trim());
      field = '';
    } else if (char === '\n' || char === '\r') {
      if (char === '\r' && source[i + 1] === '\n') i++;
      endRow();
      line++;
      rowLine = line;
    } else field += char;
  }
  endRow();
  return rows;
}
