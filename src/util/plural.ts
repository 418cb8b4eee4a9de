/** `n` and the noun in the number it takes: `1 host`, `2 hosts`, `0 hosts`. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
