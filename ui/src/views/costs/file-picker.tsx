// Files the operator gives the Costs view: a labelled <input type=file> that looks like a
// button and is focusable as one, and reading a picked or dropped file's text.

import type { JSX } from "solid-js";
import type { Phrase } from "../../costs";
import { describeError } from "../../format";

function sizeMb(bytes: number): string {
  return (bytes / (1024 * 1024)).toFixed(1);
}

/** A file's text, or a phrase saying why it could not be had. */
export async function readFile(file: File, maxMb: number): Promise<{ ok: true; text: string } | { ok: false; problem: Phrase }> {
  if (file.size > maxMb * 1024 * 1024) {
    return { ok: false, problem: { key: "costs.demand.tooBig", params: { name: file.name, size: sizeMb(file.size), max: maxMb } } };
  }
  try {
    return { ok: true, text: await file.text() };
  } catch (err) {
    return { ok: false, problem: { key: "costs.demand.readError", params: { name: file.name, message: describeError(err) } } };
  }
}

/** Whether a drag carries files (not text or a link). */
export function hasFiles(ev: DragEvent): boolean {
  return Array.from(ev.dataTransfer?.types ?? []).includes("Files");
}

export function FilePicker(props: {
  id: string;
  accept: string;
  label: string;
  disabled?: boolean;
  onFile: (file: File) => void;
}): JSX.Element {
  return (
    <label class="btn file-btn" for={props.id}>
      <input
        type="file"
        id={props.id}
        class="file-input"
        accept={props.accept}
        disabled={props.disabled}
        onChange={(ev) => {
          const input = ev.currentTarget;
          const file = input.files?.[0];
          // Cleared so that picking the same file again (after editing it) reads it again.
          input.value = "";
          if (file) props.onFile(file);
        }}
      />
      <span>{props.label}</span>
    </label>
  );
}
