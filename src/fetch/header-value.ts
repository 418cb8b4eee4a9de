/** A header as Node.js and undici give it: absent, once, or repeated. */
export type HeaderField = string | readonly string[] | undefined;

/** The first value of a header (a repeated header, such as two Location lines, counts once). */
export function firstValue(field: HeaderField): string | undefined {
  return typeof field === 'string' || field === undefined ? field : field[0];
}

/** The first value of header `name` (lowercase) of a response's headers. */
export function headerValue(headers: Readonly<Record<string, HeaderField>>, name: string): string | undefined {
  return firstValue(headers[name]);
}
