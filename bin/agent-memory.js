#!/usr/bin/env node
// The same program as bin/service.js under a name no system tool has (Debian and Ubuntu ship
// /usr/sbin/service). The CLI names itself after argv[1], so help, errors and completion
// scripts say `agent-memory`.
import './service.js';
