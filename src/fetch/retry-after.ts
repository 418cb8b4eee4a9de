/** The asctime form of an HTTP date (RFC 9110 §5.6.7), which carries no zone: it is GMT. */
const ASCTIME = /^[a-z]{3} [a-z]{3} +[0-9]{1,2} [0-9]{2}:[0-9]{2}:[0-9]{2} [0-9]{4}$/i;

/**
 * Parses a Retry-After header value (RFC 9110 §10.2.3): either a number of seconds
 * (`120`) or an HTTP date (`Wed, 21 Oct 2015 07:28:00 GMT`). Returns milliseconds to wait
 * from `nowMs` (0 for a date in the past), or undefined when the value is neither form.
 */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (/^[0-9]+$/.test(v)) return Number(v) * 1000;
  // An HTTP date has a weekday, day, month, year and time; Date.parse reads all IMF-fixdate,
  // RFC 850 and asctime forms that RFC 9110 asks recipients to accept.
  if (!/[a-z]/i.test(v)) return undefined;
  // Date.parse would read a date without a zone as local time.
  const at = Date.parse(ASCTIME.test(v) ? `${v} GMT` : v);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}
