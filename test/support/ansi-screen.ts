import { Writable } from 'node:stream';

const ESC = String.fromCharCode(27);

/**
 * A stand-in terminal for tests of what a display draws: it keeps a screen of lines and
 * applies the control sequences Node's readline and the progress bars write (cursor up and
 * down, to a column, clear line, clear right, clear down). A newline also returns to column 0,
 * as a terminal's output processing does. Lines never wrap: the width is unbounded.
 */
export class AnsiScreen extends Writable {
  readonly isTTY = true;
  readonly columns = 400;
  readonly lines: string[] = [''];
  #row = 0;
  #col = 0;

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.#apply(chunk.toString());
    done();
  }

  /** The screen's lines with trailing blanks removed, and the empty lines at its end dropped. */
  text(): string[] {
    const out = this.lines.map((l) => l.trimEnd());
    while (out.length > 0 && out[out.length - 1] === '') out.pop();
    return out;
  }

  #apply(s: string): void {
    const control = new RegExp(`${ESC}\\[(\\??)(\\d*)([A-Za-z])`, 'y');
    let i = 0;
    while (i < s.length) {
      control.lastIndex = i;
      const m = control.exec(s);
      if (m !== null) {
        this.#control(m[1] === '?', m[2] === '' ? undefined : Number(m[2]), m[3]!);
        i = control.lastIndex;
        continue;
      }
      const c = s[i++]!;
      if (c === '\n') {
        this.#row++;
        this.#col = 0;
      } else if (c === '\r') this.#col = 0;
      else this.#put(c);
    }
  }

  #control(privateMode: boolean, n: number | undefined, op: string): void {
    if (privateMode) return; // cursor shown or hidden, wrapping on or off
    const line = (): string => this.#line();
    if (op === 'A') this.#row = Math.max(0, this.#row - (n ?? 1));
    else if (op === 'B') this.#row += n ?? 1;
    else if (op === 'G') this.#col = (n ?? 1) - 1;
    else if (op === 'K' && n === 2) this.lines[this.#row] = '';
    else if (op === 'K') this.lines[this.#row] = line().slice(0, this.#col);
    else if (op === 'J') {
      this.lines[this.#row] = line().slice(0, this.#col);
      this.lines.length = this.#row + 1;
    }
  }

  #line(): string {
    while (this.lines.length <= this.#row) this.lines.push('');
    return this.lines[this.#row]!;
  }

  #put(c: string): void {
    const l = this.#line().padEnd(this.#col);
    this.lines[this.#row] = l.slice(0, this.#col) + c + l.slice(this.#col + 1);
    this.#col++;
  }
}
