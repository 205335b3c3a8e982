// The process that runs ONNX reward models (plain JavaScript, started without the parent's TypeScript
// loader). A process of its own, not a worker thread: onnxruntime-node is a native addon, and a crash or
// abort in it (at a session's teardown, or with several threads loading it) would take the whole host
// process down; here it ends only this process, and the scorer's pool starts another.
//
// Protocol (IPC, structured clone): the parent sends { id, modelPath, vocabPath, kind, texts }, this
// process answers { id, scores } or { id, error }. It exits when the parent disconnects.
import { readFileSync } from "node:fs";
import * as ort from "onnxruntime-node";

const sessions = new Map();
const vocabs = new Map();

function vocabOf(path) {
  let v = vocabs.get(path);
  if (!v) {
    const words = JSON.parse(readFileSync(path, "utf8"));
    if (!Array.isArray(words) || !words.every((w) => typeof w === "string")) throw new Error(`${path}: the vocabulary must be a JSON array of words`);
    v = new Map(words.map((w, i) => [w.toLowerCase(), i]));
    v.size_ = words.length;
    vocabs.set(path, v);
  }
  return v;
}

/** bag-of-words: words are runs of letters, digits and apostrophes in the lower-cased text; characters: each character. */
function featurize(texts, vocab, kind) {
  const V = vocab.size_;
  const x = new Float32Array(texts.length * V);
  texts.forEach((text, row) => {
    const units = kind === "characters" ? Array.from(text.toLowerCase()) : Array.from(text.toLowerCase().matchAll(/[\p{L}\p{N}']+/gu), (m) => m[0]);
    for (const u of units) {
      const i = vocab.get(u);
      if (i !== undefined) x[row * V + i] += 1;
    }
  });
  return new ort.Tensor("float32", x, [texts.length, V]);
}

/** One batch of texts scored by one model. */
async function score({ modelPath, vocabPath, kind, texts }) {
  let session = sessions.get(modelPath);
  if (!session) {
    // One thread per session: the pool parallelises across processes, and spinning intra-op threads on a
    // busy machine cost more than the matmul.
    session = await ort.InferenceSession.create(modelPath, { intraOpNumThreads: 1, interOpNumThreads: 1 });
    sessions.set(modelPath, session);
  }
  const input = featurize(texts, vocabOf(vocabPath), kind);
  const out = await session.run({ [session.inputNames[0]]: input });
  const y = out[session.outputNames[0]];
  const data = Array.from(y.data, Number);
  if (data.length !== texts.length) throw new Error(`the model returned ${data.length} scores for ${texts.length} texts (output shape ${JSON.stringify(y.dims)}; expected [N, 1] or [N])`);
  return data;
}

process.on("message", (task) => {
  score(task).then(
    (scores) => process.send({ id: task.id, scores }),
    (err) => process.send({ id: task.id, error: err instanceof Error ? err.message : String(err) }),
  );
});
// the parent closed the scorer or died: nothing more will come
process.on("disconnect", () => process.exit(0));
