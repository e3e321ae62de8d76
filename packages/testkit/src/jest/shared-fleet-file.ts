import { afterAll } from '@jest/globals';
import { drainFleet, sharedFleet } from '../shared-fleet.js';

// Set up after the environment of every file of a shared-fleet project: when the file is done,
// wait for the requests it started to end before the next file takes the fleet.
afterAll(() => drainFleet(sharedFleet()), 180_000);
