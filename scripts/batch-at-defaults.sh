#!/usr/bin/env bash
# `recall --batch` of 1,000 tasks against `service serve` as a user starts it: the defaults
# (JSON storage, bundled model, dev auth, the default rate limits), 500 stored patterns.
# Prints the wall time of each of two runs a minute apart (1,000 tasks are 10 batch requests,
# the default expensive-request budget of a minute). Needs a build (`npm run build`).
set -euo pipefail
cd "$(dirname "$0")/.."
data=$(mktemp -d); port=${PORT:-8765}
SERVICE_DATA_PATH=$data SERVICE_PORT=$port node bin/service.js serve > "$data/serve.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$data"' EXIT
export SERVICE_URL=http://127.0.0.1:$port
until node bin/service.js health > /dev/null 2>&1; do sleep 0.2; done
words='["parse","csv","sum","column","read","json","file","sort","list","merge","dict","http","retry","backoff","hash","string","split","words","count","lines"]'
node -e "const w=$words; const records=[]; for (let i=0;i<500;i++) records.push({task:\`task \${i}: \${w[i%20]} \${w[(i*7+3)%20]} \${w[(i*3+1)%20]} \${w[(i*11+5)%20]} number \${i*7919}\`, code:\`def f\${i}(): return \${i}\`, eval_score:7+(i%3)}); console.log(JSON.stringify({records}))" > "$data/import.json"
node bin/service.js import "$data/import.json" > /dev/null
node -e "const w=$words; for (let i=0;i<1000;i++) console.log(\`\${w[i%20]} \${w[(i*3+2)%20]} \${w[(i*7+1)%20]} query \${i}\`)" > "$data/tasks.txt"
for run in 1 2; do
  [ "$run" = 1 ] || sleep 61
  start=$(node -e 'console.log(Date.now())')
  node bin/service.js recall --batch "$data/tasks.txt" > "$data/out.ndjson"
  end=$(node -e 'console.log(Date.now())')
  echo "run $run: $(wc -l < "$data/out.ndjson") lines answered, $(grep -c '"error"' "$data/out.ndjson" || true) errors, $(( end - start )) ms"
done
