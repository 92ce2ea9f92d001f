# mcpool-pipe.pl ID SOCKET [NODE]: the entry `mcpool wire` gives a host for pooled server ID
# (issues 20, 30; src/cli/hosts/pipe-entry.ts). SOCKET is the daemon's socket; ID's MCP socket
# is beside it, <dir of SOCKET>/mcp/ID.sock (`@pool`, `@catalog`, `@catalog-auto`: the pool's).
#
# Daemon up: one process joining stdin and stdout to that socket (AF_UNIX = SOCK_STREAM = 1 on
# Linux, macOS and the BSDs; the BSDs' address starts with a length byte), a 4-argument select
# loop with sysread/syswrite. `w` writes a whole chunk (syswrite may write part of it). Stdin's
# EOF half-closes the socket and the loop goes on reading the daemon's answers; the socket's
# EOF (the daemon ended the session) ends it.
#
# Daemon down (the connect fails): it execs `NODE <package>/dist/cli/bin.js bridge --server ID
# --socket SOCKET`, which starts the daemon, before it has read a byte of stdin. Where that
# cannot be (no such node, no bin beside this file), every request the host sends is answered
# with a JSON-RPC error naming mcpool, the socket and the command that starts the daemon.
#
# Builtins only: no module is loaded, and no regular expression either, as the first match
# costs perl ~0.3 MB of RSS (bench P10): `index`, `rindex` and `substr` instead.
($id, $sock, $node) = @ARGV;
$node = 'node' if !defined $node;
sub up { my ($p) = @_; my $i = rindex($p, '/'); $i < 0 ? '.' : $i == 0 ? '/' : substr($p, 0, $i) }
$path = up($sock) . "/mcp/$id.sock";
socket(S, 1, 1, 0) or die "mcpool pipe: $!\n";
if (!connect(S, index($^O, 'darwin') >= 0 || index($^O, 'bsd') >= 0
    ? pack('CCa*x', 0, 1, $path) : pack('Sa*x', 1, $path))) {
  $down = "$!";
  close S;
  %scopes = ('@pool', [], '@catalog', ['--catalog'], '@catalog-auto', ['--catalog=auto']);
  @scope = exists $scopes{$id} ? @{$scopes{$id}} : ('--server', $id);
  $bin = up(up($0));
  $bin = ($bin eq '/' ? '' : $bin) . '/dist/cli/bin.js';
  $why = "no mcpool at $bin";
  if (-f $bin) {
    exec { $node } $node, $bin, 'bridge', @scope, '--socket', $sock;
    $why = "cannot run $node: $!";
  }
  refuse("mcpool: no daemon answers at $sock ($down), and this entry cannot start one ($why). "
    . "Start it with `mcpool service install` (now and at every login) or `mcpool serve`, "
    . 'then restart this MCP server.');
}
sub w { my ($f, $d) = @_; while (length $d) { $n = syswrite($f, $d) // exit; substr($d, 0, $n) = '' } }
$i = fileno STDIN;
$s = fileno S;
while (1) {
  $r = '';
  vec($r, $s, 1) = 1;
  vec($r, $i, 1) = 1 if $i >= 0;
  select($r, undef, undef, undef) > 0 or exit;
  if ($i >= 0 && vec($r, $i, 1)) {
    if (sysread(STDIN, $d, 65536)) { w(*S, $d) } else { shutdown(S, 1); $i = -1 }
  }
  if (vec($r, $s, 1)) { sysread(S, $d, 65536) or exit; w(*STDOUT, $d) }
}

# Answers every request on stdin (a line with a "method" and an "id") with `$m`, until EOF.
sub refuse {
  my ($m) = @_;
  my $e = '';
  for my $k (0 .. length($m) - 1) {
    my $c = substr($m, $k, 1);
    $e .= $c eq '"' || $c eq '\\' ? "\\$c" : ord($c) < 32 ? sprintf('\\u%04x', ord $c) : $c;
  }
  while (defined(my $l = <STDIN>)) {
    my $k = index($l, '"id"');
    next if $k < 0 || index($l, '"method"') < 0;
    $k = index($l, ':', $k) + 1;
    my ($comma, $brace) = (index($l, ',', $k), index($l, '}', $k));
    my $end = $comma < 0 || ($brace >= 0 && $brace < $comma) ? $brace : $comma;
    next if $end < 0;
    w(*STDOUT, '{"jsonrpc":"2.0","id":' . substr($l, $k, $end - $k)
      . ',"error":{"code":-32603,"message":"' . $e . '","data":{"code":"daemon-unavailable"}}}' . "\n");
  }
  exit 1;
}
