#!/usr/bin/env node
// Writes the Strimzi KafkaTopic resources from the event catalog (built dist/), or checks them.
//   node scripts/topics.mjs          write k8s/kafka-topics/kafka-topics.yaml
//   node scripts/topics.mjs --check  fail when the committed file differs from the catalog
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { STRIMZI_TOPICS_DEFAULTS, strimziKafkaTopics } from '../dist/index.js';

const here = dirname(fileURLToPath(import.meta.url));
const target = resolve(here, '../../../k8s/kafka-topics/kafka-topics.yaml');
const text = strimziKafkaTopics(STRIMZI_TOPICS_DEFAULTS);
if (process.argv.includes('--check')) {
  if (!existsSync(target) || readFileSync(target, 'utf8') !== text) {
    console.error(
      `${target} drifted from the event catalog\nrun \`npm run generate:topics -w @wdr/contracts\` (after a build) and commit the result`,
    );
    process.exit(1);
  }
  console.log('KafkaTopic resources match the catalog');
} else {
  writeFileSync(target, text);
  console.log(`wrote ${join('k8s', 'kafka-topics', 'kafka-topics.yaml')}`);
}
