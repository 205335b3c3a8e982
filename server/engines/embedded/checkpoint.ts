import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { EmbeddedCheckpointInvalidError } from "./errors.ts";

/**
 * A checkpoint directory: `embedded.json` (the header) and one little-endian float32 file per tensor
 * group (`weights.f32`, `adam-m.f32`, `adam-v.f32`, and `reference.f32` when a KL reference exists).
 */
export const CHECKPOINT_HEADER_FILE = "embedded.json";
const FORMAT = "agentjet-embedded";
const FORMAT_VERSION = 1;

export const CheckpointHeaderSchema = z.object({
  format: z.literal(FORMAT),
  formatVersion: z.literal(FORMAT_VERSION),
  shape: z.object({
    vocabSize: z.number().int(),
    layers: z.number().int(),
    dim: z.number().int(),
    heads: z.number().int(),
    context: z.number().int(),
    mlpDim: z.number().int(),
    tiedOutput: z.boolean(),
  }),
  /** The model options the engine was created with (seed included), for the record. */
  model: z.record(z.string(), z.unknown()),
  paramCount: z.number().int(),
  tensors: z.array(z.object({ name: z.string(), shape: z.array(z.number().int()), offset: z.number().int() })),
  version: z.number().int(),
  adamStep: z.number().int(),
  files: z.record(z.string(), z.string()),
  savedAt: z.string(),
});
export type CheckpointHeader = z.infer<typeof CheckpointHeaderSchema>;

export interface CheckpointData {
  header: CheckpointHeader;
  /** File key (e.g. "weights") -> its floats. */
  arrays: Record<string, Float32Array>;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

function toBytes(a: Float32Array): Buffer {
  if (!LITTLE_ENDIAN) {
    const b = Buffer.alloc(a.length * 4);
    for (let i = 0; i < a.length; i++) b.writeFloatLE(a[i]!, i * 4);
    return b;
  }
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength);
}

function fromBytes(b: Buffer): Float32Array {
  const out = new Float32Array(b.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = b.readFloatLE(i * 4);
  return out;
}

/** Writes every file under a temporary name first, then renames, so a crash never leaves a torn header. */
export async function writeCheckpoint(dir: string, data: CheckpointData): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const [key, file] of Object.entries(data.header.files)) {
    const arr = data.arrays[key];
    if (!arr) throw new EmbeddedCheckpointInvalidError(`no data for checkpoint file ${key}`);
    await writeFile(join(dir, `${file}.tmp`), toBytes(arr));
    await rename(join(dir, `${file}.tmp`), join(dir, file));
  }
  const headerPath = join(dir, CHECKPOINT_HEADER_FILE);
  await writeFile(`${headerPath}.tmp`, `${JSON.stringify(data.header, null, 2)}\n`);
  await rename(`${headerPath}.tmp`, headerPath);
}

export async function readCheckpoint(dir: string): Promise<CheckpointData> {
  let raw: string;
  try {
    raw = await readFile(join(dir, CHECKPOINT_HEADER_FILE), "utf8");
  } catch (cause) {
    throw new EmbeddedCheckpointInvalidError(`no checkpoint header ${CHECKPOINT_HEADER_FILE} in ${dir}`, cause);
  }
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (cause) {
    throw new EmbeddedCheckpointInvalidError(`checkpoint header in ${dir} is not JSON`, cause);
  }
  const parsed = CheckpointHeaderSchema.safeParse(json);
  if (!parsed.success) {
    throw new EmbeddedCheckpointInvalidError(`checkpoint header in ${dir} is malformed`, parsed.error);
  }
  const header = parsed.data;
  const arrays: Record<string, Float32Array> = {};
  for (const [key, file] of Object.entries(header.files)) {
    let bytes: Buffer;
    try {
      bytes = await readFile(join(dir, file));
    } catch (cause) {
      throw new EmbeddedCheckpointInvalidError(`checkpoint file ${file} is missing in ${dir}`, cause);
    }
    if (bytes.length !== header.paramCount * 4) {
      throw new EmbeddedCheckpointInvalidError(
        `checkpoint file ${file} has ${bytes.length} bytes, expected ${header.paramCount * 4}`,
      );
    }
    arrays[key] = fromBytes(bytes);
  }
  return { header, arrays };
}
