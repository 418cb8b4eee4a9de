// onPage: a list of items per page, stored as "data" in its links record (docs/hooks.md).
// mountcrawl crawl https://example.com/ --hook docs/examples/items.mjs
export function onPage(page) {
  const items = page
    .$('li.item')
    .map((_, li) => ({ name: page.$(li).find('.name').text(), price: Number(page.$(li).find('.price').text()) }))
    .get();
  return items.length > 0 ? { data: items } : undefined;
}
