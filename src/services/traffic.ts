import { Gateway, type GatewayOutcome, type GatewayRequest } from '../capture/gateway.js';
import type { NewMessage, StoredMessage } from '../domain/messages.js';
import { replayRequest } from '../capture/replay.js';
import { conflict } from '../domain/errors.js';
import { newTimeOrderedId } from '../domain/ids.js';
import type { EgressPolicy } from '../net/egress.js';
import type { BucketService } from './buckets.js';
import type { MessageService } from './messages.js';
import type { Principal } from './principal.js';

/** Where an exchange the gateway could not store is reported; the client's exchange goes on. */
export type StoreFailureLog = (error: unknown, messageId: string) => void;

/** The gateway of one listener: forwards requests and stores their exchanges; closed with the listener. */
export interface TrafficGateway {
  /**
   * Forwards the request upstream and stores the exchange as message `id` of the bucket once it is
   * over. `signal` aborts when the client has gone.
   */
  forward(
    bucketKey: string,
    request: GatewayRequest,
    signal: AbortSignal,
    onStoreFailure: StoreFailureLog,
  ): Promise<{ id: string; outcome: GatewayOutcome }>;
  close(): Promise<void>;
}

/** The outcome of a replay: the new message, and why the upstream could not be reached (or null). */
export type Replay = { id: string; failure: string } | { id: string; failure: null; message: StoredMessage };

/**
 * Traffic into buckets (docs/capture.md): capture URLs, the gateway and replay, each stored as a
 * message of the bucket. Outbound requests go through the gateway egress policy.
 */
export class TrafficService {
  constructor(
    private readonly deps: {
      buckets: BucketService;
      messages: MessageService;
      /** Which addresses the gateway and replay may reach (GATEWAY_EGRESS_POLICY). */
      egress: EgressPolicy;
      /** Response body bytes kept in a message the gateway or replay stores (RESPONSE_BODY_LIMIT). */
      maxBodyBytes: number;
    },
  ) {}

  /** Throws unless traffic may go into the bucket: it exists, and the token it requires (if any) was presented. */
  async admit(bucketKey: string, presentedToken: string | undefined): Promise<void> {
    await this.deps.buckets.forTraffic(bucketKey, presentedToken);
  }

  /**
   * Stores a captured request, with the answer the capture URL gave it, as message `id` of the
   * bucket (the id is in that answer, so it is chosen before).
   */
  async capture(bucketKey: string, message: NewMessage, id: string): Promise<void> {
    await this.deps.messages.record(bucketKey, message, id);
  }

  /** A gateway with its own upstream connections, for one listener. */
  openGateway(): TrafficGateway {
    const gateway = new Gateway({ egress: this.deps.egress, maxBodyBytes: this.deps.maxBodyBytes });
    const { messages } = this.deps;
    return {
      async forward(bucketKey, request, signal, onStoreFailure) {
        const id = newTimeOrderedId();
        const record = async (message: NewMessage): Promise<void> => {
          try {
            await messages.record(bucketKey, message, id);
          } catch (error) {
            onStoreFailure(error, id);
          }
        };
        return { id, outcome: await gateway.forward(request, record, signal) };
      },
      close: () => gateway.close(),
    };
  }

  /**
   * Sends a stored request again and stores the exchange as a new message of the bucket (when the
   * upstream cannot be reached, the request alone, with the reason as its note).
   */
  async replay(principal: Principal, bucketKey: string, messageUuid: string): Promise<Replay> {
    const { messages } = this.deps;
    const original = await messages.detail(principal, bucketKey, messageUuid);
    if (!original.request) throw conflict(`Message ${messageUuid} has no request to replay`);
    const { message, failure } = await replayRequest(
      { uuid: original.uuid, request: original.request },
      { egress: this.deps.egress, maxBodyBytes: this.deps.maxBodyBytes },
    );
    const id = await messages.record(bucketKey, message);
    if (failure !== null) return { id, failure };
    return { id, failure: null, message: await messages.detail(principal, bucketKey, id) };
  }
}
