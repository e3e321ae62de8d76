import { Router } from 'express';
import { ledgerApi } from '@wdr/contracts';
import { parseOrThrow as parse } from '@wdr/kit/errors';
import type { LedgerDeps } from '../deps.js';
import { balanceOf, fund } from '../domain/funding.js';
import { holdLlmCharge, settleLlmCharge } from '../domain/llm-charges.js';
import { grantLease, releaseLease } from '../domain/leases.js';
import { planOf } from '../domain/plans.js';
import { readReservation, reserve, reserveBatch } from '../domain/reservations.js';
import { authorizeStep } from '../domain/settlement.js';
import { statementOf } from '../domain/statement.js';
import { usageOf } from '../domain/usage.js';
import { tokenFlowMetrics } from '../metrics.js';
import { PerKeyLimit } from './per-tenant-limit.js';

/** Reservations of one tenant running at once in this process (they queue on its account row anyway). */
const RESERVATIONS_PER_TENANT = 4;

/** Internal API, reachable only inside the cluster (see k8s NetworkPolicy). */
export function internalRoutes(deps: LedgerDeps): Router {
  const r = Router();
  const version = deps.env.PRICING_VERSION;
  const admissions = deps.metrics.counter('reservations_total', 'Reservation requests, by outcome.', ['outcome']);
  const tokens = tokenFlowMetrics(deps.metrics);
  const perTenant = new PerKeyLimit(RESERVATIONS_PER_TENANT);

  r.post(ledgerApi.reserve.route, async (req, res) => {
    const cmd = parse(ledgerApi.reserve.body, req.body);
    try {
      const result = await perTenant.run(cmd.tenant_id, () => reserve(deps.db, version, cmd));
      admissions.inc({ outcome: result.replay ? 'replayed' : 'admitted' });
      if (!result.replay) tokens.reserved(result.held_tokens); // reserve() returns after its commit
      res.status(result.replay ? 200 : 201).json(result);
    } catch (err) {
      admissions.inc({ outcome: 'refused' });
      throw err;
    }
  });
  const terms = {
    ttlSeconds: deps.env.LEASE_TTL_S,
    returnGraceSeconds: deps.env.LEASE_RETURN_GRACE_S,
    maxBalanceShare: deps.env.LEASE_MAX_BALANCE_PERCENT / 100,
  };
  r.post(ledgerApi.grantLease.route, async (req, res) => {
    const cmd = parse(ledgerApi.grantLease.body, req.body);
    const result = await perTenant.run(cmd.tenant_id, () => grantLease(deps.db, version, terms, cmd));
    if (!result.replay) tokens.reserved(result.granted_tokens); // committed: a lease is on hold until used or returned
    res.status(result.replay ? 200 : 201).json(result);
  });
  r.post(ledgerApi.releaseLease.route, async (req, res) => {
    const leaseId = parse(ledgerApi.releaseLease.params.leaseId, req.params['leaseId']);
    const cmd = parse(ledgerApi.releaseLease.body, req.body);
    const result = await perTenant.run(cmd.tenant_id, () => releaseLease(deps.db, leaseId, cmd));
    if (!result.replay) tokens.refunded('refunded', result.released_tokens); // committed: back to the tenant, as the final return
    res.status(200).json(result);
  });
  r.post(ledgerApi.reserveBatch.route, async (req, res) => {
    const cmd = parse(ledgerApi.reserveBatch.body, req.body);
    const result = await perTenant.run(cmd.tenant_id, () => reserveBatch(deps.db, version, cmd));
    tokens.reserved(result.held_tokens); // committed; replayed items hold nothing new
    res.status(result.replay ? 200 : 201).json(result);
  });
  r.get(ledgerApi.readReservation.route, async (req, res) => {
    res.json(await readReservation(deps.db, parse(ledgerApi.readReservation.params.requestId, req.params['requestId'])));
  });
  r.post(ledgerApi.authorizeStep.route, async (req, res) => {
    const requestId = parse(ledgerApi.authorizeStep.params.requestId, req.params['requestId']);
    const flows = { held: 0 };
    const answer = await authorizeStep(deps.db, requestId, parse(ledgerApi.authorizeStep.body, req.body), flows);
    tokens.reserved(flows.held); // the step's extra hold, committed
    res.json(answer);
  });

  // Grants only: top-ups and corrections are the admin CLI's (src/admin.ts), never an HTTP call.
  r.post(ledgerApi.grant.route, async (req, res) => {
    const tenantId = parse(ledgerApi.grant.params.tenantId, req.params['tenantId']);
    const b = parse(ledgerApi.grant.body, req.body);
    const result = await fund(deps.db, 'grant', { tenant_id: tenantId, amount: b.amount, reference: b.reference, memo: b.memo ?? null });
    res.status(result.created ? 201 : 200).json(result);
  });

  r.get(ledgerApi.balance.route, async (req, res) => {
    res.json(await balanceOf(deps.db, parse(ledgerApi.balance.params.tenantId, req.params['tenantId'])));
  });
  r.get(ledgerApi.statement.route, async (req, res) => {
    const tenantId = parse(ledgerApi.statement.params.tenantId, req.params['tenantId']);
    res.json(await statementOf(deps.db, tenantId, parse(ledgerApi.statement.query, req.query)));
  });
  r.get(ledgerApi.usage.route, async (req, res) => {
    res.json(await usageOf(deps.db, parse(ledgerApi.usage.params.tenantId, req.params['tenantId'])));
  });
  r.get(ledgerApi.plan.route, async (req, res) => {
    res.json(await planOf(deps.db, parse(ledgerApi.plan.params.tenantId, req.params['tenantId']), version));
  });
  const llmCharges = deps.metrics.counter('llm_charges_total', 'Paid LLM operations (recipe generation and repair), by step and outcome.', [
    'step',
    'outcome',
  ]);
  r.post(ledgerApi.holdLlmCharge.route, async (req, res) => {
    const cmd = parse(ledgerApi.holdLlmCharge.body, req.body);
    try {
      const result = await holdLlmCharge(deps.db, cmd);
      llmCharges.inc({ step: 'hold', outcome: result.replay ? 'replayed' : 'held' });
      if (!result.replay) tokens.reserved(result.held_tokens, 'llm'); // committed
      res.status(result.replay ? 200 : 201).json(result);
    } catch (err) {
      llmCharges.inc({ step: 'hold', outcome: 'refused' });
      throw err;
    }
  });
  r.post(ledgerApi.settleLlmCharge.route, async (req, res) => {
    const operationId = parse(ledgerApi.settleLlmCharge.params.operationId, req.params['operationId']);
    const result = await settleLlmCharge(deps.db, operationId, parse(ledgerApi.settleLlmCharge.body, req.body));
    llmCharges.inc({ step: 'settle', outcome: result.replay ? 'replayed' : result.state });
    if (!result.replay && result.state !== 'held') {
      // Committed: the charge (from the hold first, then the balance) and what of the hold came back.
      tokens.charged(result.charged_tokens, 'llm');
      tokens.refunded(result.state === 'charged' ? 'settled' : 'refunded', Math.max(0, result.held_tokens - result.charged_tokens), 'llm');
    }
    res.json(result);
  });
  return r;
}
