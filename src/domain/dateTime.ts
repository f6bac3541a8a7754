// An RFC 3339 date-time that names a real instant: the form ajv-formats accepts, with a date that
// exists on the calendar, no leap second (23:59:60, which Date.parse cannot read) and no 24:00.

const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysIn(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!;
}

export function isCalendarDateTime(text: string): boolean {
  const parts = DATE_TIME.exec(text);
  if (!parts) return false;
  const [year, month, day, hour, minute, second] = parts.slice(1, 7).map(Number) as [
    number, number, number, number, number, number,
  ];
  const offsetHours = parts[7] === undefined ? 0 : Number(parts[7]);
  const offsetMinutes = parts[8] === undefined ? 0 : Number(parts[8]);
  return (
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysIn(year, month) &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 59 &&
    offsetHours <= 23 &&
    offsetMinutes <= 59 &&
    !Number.isNaN(Date.parse(text))
  );
}
