// priority: the order of each host's queue, higher first (docs/hooks.md).
// mountcrawl crawl https://example.com/ --hook docs/examples/priority.mjs
export function priority(url, context) {
  if (url.includes('/important/')) return 100; // before everything else of its host
  return context.priority; // the default: minus the depth (breadth first)
}
