// Mounting a Solid view: its <section> (the id, data-view and label every view has) with
// the component rendered inside, and the dispose that tears the component down.

import type { JSX } from "solid-js";
import { render } from "solid-js/web";
import type { ViewId } from "./view";

export function mountView(
  id: ViewId,
  opts: { className: string; labelledBy: string },
  component: () => JSX.Element,
): { el: HTMLElement; dispose: () => void } {
  const el = document.createElement("section");
  el.className = opts.className;
  el.id = `view-${id}`;
  el.dataset.view = id;
  el.setAttribute("aria-labelledby", opts.labelledBy);
  const dispose = render(component, el);
  return { el, dispose };
}
