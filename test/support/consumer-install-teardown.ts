/**
 * Global setup of the suite whose teardown removes the run's shared packed-and-installed consumer
 * project (consumer-install.ts), made by the first test file that needed it. Listed after
 * orphan-check.ts, whose setup sets the run marker the directory is named by.
 */
import { removeSharedConsumerProject } from './consumer-install.js';

export default function setup(): () => void {
  return removeSharedConsumerProject;
}
