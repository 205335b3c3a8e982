import type { ChatTurnMessage } from "../tokenizers/tokenizer.ts";
import type { ResponseInputItem } from "./schemas.ts";

/**
 * What the Responses API lets a client refer back to: output items by id (`item_reference`) and whole
 * conversations by response id (`previous_response_id`). Kept per episode (a key reads only its own
 * episode's), in memory, the oldest forgotten past `limit` entries.
 */
export class ResponseStore {
  private readonly items = new Map<string, ResponseInputItem>();
  private readonly conversations = new Map<string, ChatTurnMessage[]>();
  constructor(private readonly limit = 50_000) {}

  putItem(episodeId: string, id: string, item: ResponseInputItem): void {
    bounded(this.items, `${episodeId}\u0000${id}`, item, this.limit);
  }

  item(episodeId: string, id: string): ResponseInputItem | undefined {
    return this.items.get(`${episodeId}\u0000${id}`);
  }

  /** The conversation a response ended (its input and its output, without its instructions). */
  putConversation(episodeId: string, responseId: string, messages: ChatTurnMessage[]): void {
    bounded(this.conversations, `${episodeId}\u0000${responseId}`, messages, this.limit / 10);
  }

  conversation(episodeId: string, responseId: string): ChatTurnMessage[] | undefined {
    return this.conversations.get(`${episodeId}\u0000${responseId}`);
  }
}

function bounded<V>(map: Map<string, V>, key: string, value: V, limit: number): void {
  map.delete(key);
  map.set(key, value);
  while (map.size > limit) map.delete(map.keys().next().value!);
}
