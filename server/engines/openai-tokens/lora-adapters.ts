import { ReplicaRequestError } from "./errors.ts";
import type { InferenceApi } from "./inference-api.ts";
import type { ReplicaHttp } from "./replica-http.ts";

/**
 * The LoRA adapter calls vLLM and SGLang share, under `prefix` (vLLM `/v1`, SGLang none). Loading a name
 * twice is refused (400 "already"); after a checkpoint load the same version's name comes back, so it is
 * unloaded and loaded again.
 */
export function loraAdapterCalls(http: ReplicaHttp, prefix: string): Pick<InferenceApi, "loadAdapter" | "unloadAdapter"> {
  const load = (baseUrl: string, name: string, path: string) => http.post(baseUrl, `${prefix}/load_lora_adapter`, { lora_name: name, lora_path: path });
  const unload = (baseUrl: string, name: string) => http.post(baseUrl, `${prefix}/unload_lora_adapter`, { lora_name: name });
  return {
    async loadAdapter(baseUrl, name, path) {
      try {
        await load(baseUrl, name, path);
      } catch (e) {
        if (!(e instanceof ReplicaRequestError && e.status === 400 && /already/i.test(e.message))) throw e;
        await unload(baseUrl, name);
        await load(baseUrl, name, path);
      }
    },
    async unloadAdapter(baseUrl, name) {
      await unload(baseUrl, name);
    },
  };
}
