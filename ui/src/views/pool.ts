// The Pool view lives in views/pool/ (one component a file); pool-view.tsx is the entry.
export { poolView } from "./pool/pool-view";
