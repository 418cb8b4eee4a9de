// beforeFetch: headers, skips and answers without the network (docs/hooks.md).
// mountcrawl crawl https://example.com/ --hook docs/examples/before-fetch.mjs
export function beforeFetch(request) {
  // The built-in steps ran first: request.headers already holds the user agent.
  request.headers['user-agent'] = `${request.headers['user-agent']} (crawling ${request.host})`;
  request.headers['x-crawl-token'] = process.env.CRAWL_TOKEN ?? 'demo-token';
  if (request.url.includes('/private/')) return { action: 'skip', reason: 'private area' };
  if (request.url.endsWith('/offline.html')) {
    // Stored like a fetched page; its links are followed.
    return { action: 'respond', status: 200, body: '<html><title>offline</title><a href="/after-offline.html">next</a></html>' };
  }
}
