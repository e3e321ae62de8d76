import type { Redis } from 'ioredis';

/**
 * GCRA (generic cell rate algorithm) for "N submissions per window": one key per tenant holding
 * the theoretical arrival time (TAT, ms). Each call costs window/N ms; a call is allowed while the
 * TAT stays within one window of now, so a quiet tenant may burst its whole quota. Time comes from
 * Redis (TIME), so several gateway replicas agree. Atomic: one script, one key.
 *
 * As a Lua function shared by the scripts below: answers allowed (0|1), remaining, retry_after_ms,
 * reset_ms (when the quota is whole again) and Redis's now (ms).
 */
const GCRA_FUNCTION = `
local function gcra(key, limit, window)
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local interval = window / limit
  local tat = tonumber(redis.call('GET', key))
  if tat == nil or tat < now then tat = now end
  local new_tat = tat + interval
  local allow_at = new_tat - window
  if allow_at > now then
    return 0, 0, math.ceil(allow_at - now), math.ceil(tat - now), now
  end
  redis.call('SET', key, string.format('%.3f', new_tat), 'PX', math.ceil(new_tat - now) + 1000)
  local remaining = math.floor((window - (new_tat - now)) / interval + 1e-9)
  return 1, remaining, 0, math.ceil(new_tat - now), now
end
`;

/** The rate alone (KEYS[1]; ARGV: limit, window ms): {allowed, remaining, retry_after_ms, reset_ms}. */
const GCRA = `${GCRA_FUNCTION}
local allowed, remaining, retry, reset = gcra(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]))
return {allowed, remaining, retry, reset}
`;

/**
 * A submission's two limits in one round trip: the rate (KEYS[1]) and, when the rate allows it,
 * its ticket among the tenant's admissions in flight (KEYS[2]: a sorted set of ticket ids scored by
 * their expiry, so a gateway that dies mid-admission leaks nothing for longer than the ticket's
 * lifetime). ARGV: limit, window ms, ticket, ticket ttl ms. Returns GCRA's four answers and the
 * admissions in flight, this one included (0 when refused: no ticket was added).
 */
const ADMIT = `${GCRA_FUNCTION}
local allowed, remaining, retry, reset, now = gcra(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]))
if allowed == 0 then return {0, 0, retry, reset, 0} end
local ttl = tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZADD', KEYS[2], now + ttl, ARGV[3])
if redis.call('PTTL', KEYS[2]) < ttl then redis.call('PEXPIRE', KEYS[2], ttl) end
return {1, remaining, 0, reset, redis.call('ZCARD', KEYS[2])}
`;

export interface LimiterRedis extends Redis {
  gcra(key: string, limit: number, windowMs: number): Promise<[number, number, number, number]>;
  admit(
    rateKey: string,
    inflightKey: string,
    limit: number,
    windowMs: number,
    ticket: string,
    ttlMs: number,
  ): Promise<[number, number, number, number, number]>;
}

/** Register the scripts on a client (ioredis sends EVALSHA and falls back to EVAL after a Redis restart). */
export function withLimiterScripts(redis: Redis): LimiterRedis {
  redis.defineCommand('gcra', { numberOfKeys: 1, lua: GCRA });
  redis.defineCommand('admit', { numberOfKeys: 2, lua: ADMIT });
  return redis as LimiterRedis;
}
