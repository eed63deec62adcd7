// Ready signals over Redis pub/sub: PUBLISH on the queue's connection, SUBSCRIBE on a duplicate
// of it (a subscribed connection can do nothing else). ioredis reconnects and subscribes again
// by itself; signals published while it is away are lost, which the pollers cover.
import type { Redis } from 'ioredis';
import type { SignalBus } from '../ready-signal.js';
import { closeRedis, redactError } from './redis-client.js';

export class RedisSignalBus implements SignalBus {
  constructor(
    private readonly client: Redis,
    /** `<prefix>:tq:ready`: farms on one Redis with different prefixes do not wake each other. */
    private readonly channel: string,
    private readonly redisUrl: string,
    private readonly onError: (err: Error) => void = () => {},
  ) {}

  async publish(message: string): Promise<void> {
    await this.client.publish(this.channel, message);
  }

  async subscribe(onMessage: (message: string) => void): Promise<() => Promise<void>> {
    const sub = this.client.duplicate({ connectionName: `${this.channel}:subscriber`, lazyConnect: true });
    sub.on('error', (err: Error) => this.onError(redactError(err, this.redisUrl)));
    sub.on('message', (channel: string, message: string) => {
      if (channel === this.channel) onMessage(message);
    });
    try {
      await sub.connect();
      await sub.subscribe(this.channel);
    } catch (err) {
      sub.disconnect();
      throw redactError(err, this.redisUrl);
    }
    return () => closeRedis(sub, 1000);
  }
}
