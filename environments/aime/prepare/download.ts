import { AimeDataError } from "./errors.ts";

/** A public dataset on the Hugging Face Hub, read through its datasets-server rows API. */
export interface HubSource {
  dataset: string;
  config: string;
  split: string;
}

/** AIME 2024 (HuggingFaceH4) and AIME 2025 (MathArena): fields `problem`, `answer`. */
export const DEFAULT_SOURCES: readonly HubSource[] = [
  { dataset: "HuggingFaceH4/aime_2024", config: "default", split: "train" },
  { dataset: "MathArena/aime_2025", config: "default", split: "train" },
];

const ROWS_URL = "https://datasets-server.huggingface.co/rows";
const PAGE = 100;

/** Downloads every row of a Hub dataset split. `fetchImpl` is injected so this is testable without a network. */
export async function downloadRows(source: HubSource, fetchImpl: typeof fetch = fetch): Promise<Record<string, unknown>[]> {
  const rows: Record<string, unknown>[] = [];
  for (let offset = 0; ; offset += PAGE) {
    const url = new URL(ROWS_URL);
    url.search = new URLSearchParams({ ...source, offset: String(offset), length: String(PAGE) }).toString();
    let res: Response;
    try {
      res = await fetchImpl(url);
    } catch (cause) {
      throw new AimeDataError(`download ${source.dataset} failed (${(cause as Error).message}); offline, pass --data <file>`, { cause });
    }
    if (!res.ok) throw new AimeDataError(`download ${source.dataset}: HTTP ${res.status}`);
    const body = (await res.json()) as { rows?: Array<{ row?: Record<string, unknown> }>; num_rows_total?: number };
    const page = (body.rows ?? []).flatMap((r) => (r.row === undefined ? [] : [r.row]));
    rows.push(...page);
    if (page.length < PAGE || (body.num_rows_total !== undefined && rows.length >= body.num_rows_total)) return rows;
  }
}
