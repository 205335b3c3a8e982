/**
 * TEST DOUBLES for the compose test: the vLLM double (port 8000) and the trainer double (port 8800) in
 * one process, listening on every address, standing in for the GPU box where CI has none.
 */
import { buildVllmDouble } from "../../doubles/vllm-double.ts";
import { buildTrainerDouble } from "../../doubles/trainer-double.ts";
import { createEmbeddedTokenizer } from "../../../server/tokenizers/embedded.ts";

const vllm = buildVllmDouble({ model: "policy-model", vocabSize: createEmbeddedTokenizer().vocabSize });
const trainer = buildTrainerDouble({ model: "policy-model", publishDir: "/tmp/publish" });
await vllm.app.listen({ host: "0.0.0.0", port: 8000 });
await trainer.app.listen({ host: "0.0.0.0", port: 8800 });
console.log("doubles listening on 8000 (vLLM) and 8800 (trainer)");
