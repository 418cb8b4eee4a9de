/**
 * warcio, loaded the first time a WARC record is built or indexed: importing it costs about
 * half a second on a loaded machine, which a crawl without --warc should not pay.
 */
let loading: Promise<typeof import('warcio')> | undefined;

export function loadWarcio(): Promise<typeof import('warcio')> {
  loading ??= import('warcio');
  return loading;
}
