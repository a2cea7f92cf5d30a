// A tiny DOM helper: h(tag, attrs, ...children). No framework, no innerHTML.
//
// attrs:
//   class / any attribute   -> setAttribute (true -> "", false/null/undefined -> omitted)
//   value / checked          -> set as properties (form controls)
//   on: { click: fn, ... }   -> addEventListener, typed per event
//
// Inline styles are deliberately not supported: the CSP forbids style attributes.

export type Child = Node | string | number | null | undefined | false | readonly Child[];

export type Handlers = {
  [E in keyof HTMLElementEventMap]?: (ev: HTMLElementEventMap[E]) => void;
};

export type AttrValue = string | number | boolean | null | undefined;

export type Attrs = {
  on?: Handlers;
  value?: string;
  checked?: boolean;
  style?: never;
} & { [name: string]: AttrValue | Handlers };

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Attrs | null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [name, value] of Object.entries(attrs)) {
      if (name === "on") {
        const handlers = value as Handlers;
        for (const [type, fn] of Object.entries(handlers)) {
          if (fn) el.addEventListener(type, fn as EventListener);
        }
      } else if (name === "value" || name === "checked") {
        (el as unknown as Record<string, unknown>)[name] = value;
      } else {
        setAttr(el, name, value as AttrValue);
      }
    }
  }
  append(el, children);
  return el;
}

export function setAttr(el: Element, name: string, value: AttrValue): void {
  if (value === false || value === null || value === undefined) {
    el.removeAttribute(name);
  } else if (value === true) {
    el.setAttribute(name, "");
  } else {
    el.setAttribute(name, String(value));
  }
}

export function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) {
      append(parent, child as readonly Child[]);
    } else if (child instanceof Node) {
      parent.appendChild(child);
    } else {
      parent.appendChild(document.createTextNode(String(child)));
    }
  }
}

/** Remove every child of `el`, then append `children`. */
export function replaceChildren(el: Node, ...children: Child[]): void {
  while (el.firstChild) el.removeChild(el.firstChild);
  append(el, children);
}
