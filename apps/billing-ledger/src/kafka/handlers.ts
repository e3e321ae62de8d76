import type { EventHandler } from '@wdr/kit/kafka';
import type { SettlementRequested } from '@wdr/contracts';
import type { z } from 'zod';
import type { Prisma } from '../generated/prisma/client.js';
import { settle } from '../domain/reservations.js';

type Tx = Prisma.TransactionClient;

/** billing.commands -> resolve the reservation exactly once. */
export const onSettlementRequested: EventHandler<Tx> = async (envelope, ctx) => {
  const data = envelope.data as z.infer<typeof SettlementRequested>;
  await ctx.transaction((tx) => settle(tx, data));
};
