import type { CrawlConfig } from '../config/crawl-config.js';
import { ExitCode, FatalError } from '../errors.js';

function checkProxyUrl(raw: string, from: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new FatalError('BAD_OPTION', `${from} ${JSON.stringify(raw)}: not a URL (expected http://host:port)`, ExitCode.USAGE);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new FatalError('BAD_OPTION', `${from} ${JSON.stringify(raw)}: only http:// and https:// proxies are supported`, ExitCode.USAGE);
  }
  return raw;
}

/**
 * The proxy settings of a crawl: `--proxy URL` for every request (nothing exempt), else the
 * usual environment variables, as curl and wget read them: HTTP_PROXY for http URLs,
 * HTTPS_PROXY for https URLs (lower-case names too), NO_PROXY for hosts that go direct.
 * Read here, at the edge: below the CLI nothing reads process.env.
 */
export function proxyFrom(option: unknown, env: NodeJS.ProcessEnv): Pick<CrawlConfig, 'proxy'> {
  if (typeof option === 'string') {
    const url = checkProxyUrl(option, '--proxy');
    return { proxy: { http: url, https: url } };
  }
  const http = env.http_proxy || env.HTTP_PROXY;
  const https = env.https_proxy || env.HTTPS_PROXY;
  if (!http && !https) return {};
  const noProxy = env.no_proxy || env.NO_PROXY;
  return {
    proxy: {
      ...(http ? { http: checkProxyUrl(http, 'HTTP_PROXY') } : {}),
      ...(https ? { https: checkProxyUrl(https, 'HTTPS_PROXY') } : {}),
      ...(noProxy ? { noProxy } : {}),
    },
  };
}
