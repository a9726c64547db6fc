// A tiny element builder. Text always goes in through `createTextNode` and attributes through
// `setAttribute`: the page never parses HTML (no innerHTML anywhere), so an option holding
// `<img src=x onerror=...>` or `</script>` is shown as the characters it is.

export type Attrs = { [name: string]: string | number | boolean | null | undefined | ((event: Event) => void) };
export type Child = Node | string | null | undefined | false | Child[];

/** Appends `children` to `el`: nested lists flattened, strings as text, empty ones skipped. */
export function append(doc: Document, el: Node, children: Child[]): void {
  for (const child of children) {
    if (Array.isArray(child)) append(doc, el, child);
    else if (typeof child === "string") el.appendChild(doc.createTextNode(child));
    else if (child) el.appendChild(child);
  }
}

export function builder(doc: Document): (tag: string, attrs?: Attrs | null, ...children: Child[]) => HTMLElement {
  return (tag, attrs, ...children) => {
    const el = doc.createElement(tag);
    if (attrs) {
      for (const name of Object.keys(attrs)) {
        const value = attrs[name];
        if (typeof value === "function") el.addEventListener(name.slice(2), value);
        else if (value === true) el.setAttribute(name, "");
        else if (value !== false && value !== null && value !== undefined) el.setAttribute(name, String(value));
      }
    }
    append(doc, el, children);
    return el;
  };
}

/** Removes every child of `el`. */
export function clear(el: Node): void {
  while (el.firstChild) el.removeChild(el.firstChild);
}
