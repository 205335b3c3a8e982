// The piscina worker that runs ONNX reward models (plain JavaScript: worker threads start without the
// parent's TypeScript loader). One task scores a batch of texts with one model: the texts become
// bag-of-words count features here, off the caller's event loop, then one session.run scores them all.
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

export default async function score({ modelPath, vocabPath, kind, texts }) {
  let session = sessions.get(modelPath);
  if (!session) {
    // One thread per session: the pool parallelises across workers, and spinning intra-op threads on a
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
