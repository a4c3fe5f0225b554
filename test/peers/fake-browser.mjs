// A "browser" for the OAuth test: $BROWSER is run with the authorization URL
// as its last argument. It follows the authorization server's redirect to
// mcpscope's loopback listener the way a person's browser would after they
// approve, and exits.
const url = process.argv[process.argv.length - 1];
const res = await fetch(url, { redirect: 'follow' });
process.stderr.write(`fake-browser: ${res.status} from ${res.url}\n`);
