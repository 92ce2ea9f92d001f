# mcpool-pipe.pl ID SOCKET [NODE]: the entry `mcpool wire` gives a host for pooled server ID
# (src/cli/hosts/pipe-entry.ts, docs/bridge.md). SOCKET is the daemon's socket; ID's MCP socket
# is beside it, <dir of SOCKET>/mcp/ID.sock (`@pool`, `@catalog`, `@catalog-auto`: the pool's).
#
# Daemon up: one process joining stdin and stdout to that socket (AF_UNIX = SOCK_STREAM = 1 on
# Linux, macOS and the BSDs; the BSDs' address starts with a length byte), a 4-argument select
# loop with sysread/syswrite, whole lines (one JSON-RPC message each) both ways. Stdin's EOF
# half-closes the socket and the loop goes on reading the daemon's answers; the socket's EOF
# after that (the daemon ended the session) ends it.
#
# Every connection opens with the host's name, a random id made once at start (as the lean
# bridge's; src/bridge/lean/host-signals.ts), so a daemon that took over from the last finds
# the host's tasks and subscription places.
#
# The daemon going away under a live host (a restart, an upgrade) keeps the
# host's session, as the lean bridge does (src/bridge/lean/session.ts): each request in flight
# is answered with a coded error (it may or may not have run); the socket is dialled again
# (0.1 s doubling to 2 s) for 60 s (MCPOOL_RECONNECT_MS, as the bridges read it) while the
# host's lines wait; connected, the host's `initialize` goes again and its answer is dropped,
# then `notifications/initialized`, its last `logging/setLevel` and its resource subscriptions
# (answers dropped), the host is told `notifications/tools/list_changed` in its era, decided
# once (legacy after `initialize`; after `server/discover`, a result from the daemon is
# 2026-07-28 and an error legacy, told unsolicited even if it never sends `initialize`, as a
# server direct tells it; while neither has come, a host whose lines carry
# `_meta["io.modelcontextprotocol/protocolVersion"]` is a 2026-07-28 one). A 2026-07-28 host is told on
# each listen stream the daemon acknowledged with `toolsListChanged`, the notification naming
# the stream in `_meta["io.modelcontextprotocol/subscriptionId"]`, and never unsolicited. Its
# open `subscriptions/listen` streams (never answered with that error) are sent again as they
# were, same id, their new acknowledgements dropped, and what waited goes. Ids (a request's, a
# stream's) are matched as JSON-RPC matches them (`idk`): `7` and `7.0` are one id, `"7"` another.
# After the window what waits, and every request until a daemon is back, is answered with an
# error naming mcpool and how to start it (a listen stream too); the socket is still dialled
# every 5 s.
#
# Daemon down at the start (the connect fails): it execs `NODE <package>/dist/cli/bin.js
# bridge --server ID --socket SOCKET`, which starts the daemon, before it has read a byte of
# stdin (and answers a host's opening as the daemon last did meanwhile: docs/hosts.md). Where that cannot be (no such node, no bin beside this file), every request the host
# sends is answered with a JSON-RPC error naming mcpool, the socket and the command that starts
# the daemon.
#
# Builtins only: no module is loaded, and no regular expression either, as the first match
# costs perl ~0.3 MB of RSS (bench/entry.mjs): `index`, `rindex`, `substr` and `tr` instead.
($id, $sock, $node) = @ARGV;
$node = 'node' if !defined $node;
$SIG{PIPE} = 'IGNORE';
$w = $ENV{MCPOOL_RECONNECT_MS};
$window = defined $w && $w ne '' && $w eq int($w) && $w >= 0 ? $w / 1000 : 60;
sub up { my ($p) = @_; my $i = rindex($p, '/'); $i < 0 ? '.' : $i == 0 ? '/' : substr($p, 0, $i) }
$path = up($sock) . "/mcp/$id.sock";
# The host's name, made once (16 random bytes in hex) and the first line of every connection,
# as the lean bridge's: a daemon that took over from the last finds the host's tasks and
# subscription places by it (src/bridge/lean/host-signals.ts). No /dev/urandom: no name.
if (open(R, '<', '/dev/urandom') && sysread(R, $rnd, 16) == 16) {
  $hello = '{"jsonrpc":"2.0","method":"notifications/mcpool/host-name","params":{"taskOwner":"'
    . unpack('H*', $rnd) . "\"}}\n";
}
close R;
$fix = 'Start it with `mcpool service install` (now and at every login) or `mcpool serve`';
sub dial {
  socket(S, 1, 1, 0) or return 0;
  if (connect(S, index($^O, 'darwin') >= 0 || index($^O, 'bsd') >= 0
    ? pack('CCa*x', 0, 1, $path) : pack('Sa*x', 1, $path))) {
    w(*S, $hello) if defined $hello;
    return 1;
  }
  $down = "$!";
  close S;
  0;
}
if (!dial()) {
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
    . "$fix, then restart this MCP server.");
}
# Writes a whole chunk (syswrite may write part of it); false when the other end is gone.
sub w { my ($f, $d) = @_; while (length $d) { my $n = syswrite($f, $d) // return 0; substr($d, 0, $n) = '' } 1 }
sub o { w(*STDOUT, $_[0]) or exit }
# The JSON string body of `$m`.
sub esc {
  my ($m) = @_;
  my $e = '';
  for my $k (0 .. length($m) - 1) {
    my $c = substr($m, $k, 1);
    $e .= $c eq '"' || $c eq '\\' ? "\\$c" : ord($c) < 32 ? sprintf('\\u%04x', ord $c) : $c;
  }
  $e;
}
# The error answer to request id `$i` (its JSON text), framed.
sub fail {
  my ($i, $m, $detail) = @_;
  '{"jsonrpc":"2.0","id":' . $i . ',"error":{"code":-32603,"message":"' . esc($m)
    . '","data":{"code":"daemon-unavailable","detail":{' . $detail . '}}}}' . "\n";
}
$inflight = 'mcpool: the daemon went away during this request (it restarted or stopped); the '
  . 'request may or may not have run. This entry reconnects by itself: send it again.';
$gone = "mcpool: no daemon answers at $sock (it stopped or is restarting); $fix. This entry "
  . 'reconnects by itself once it is back.';
# The index of the quote that ends the JSON string whose opening quote is at `$q`.
sub qend {
  my ($l, $q) = @_;
  while (1) {
    $q = index($l, '"', $q + 1);
    return length $l if $q < 0;
    my $b = 0;
    $b++ while $q - 1 - $b >= 0 && substr($l, $q - 1 - $b, 1) eq '\\';
    return $q if $b % 2 == 0;
  }
}
# The top-level "method" (its text) and "id" (its JSON) of a line, undef where absent, and
# whether it has a top-level "error": a scan from string to string, the brackets between them
# counted with tr.
sub top {
  my ($l) = @_;
  my ($p, $depth, $n, $m, $i, $e) = (0, 0, length $l);
  while ($p < $n) {
    my $q = index($l, '"', $p);
    $q = $n if $q < 0;
    my $seg = substr($l, $p, $q - $p);
    $depth += ($seg =~ tr/{[//) - ($seg =~ tr/}]//);
    last if $q >= $n;
    my $r = qend($l, $q);
    $p = $r + 1;
    next if $depth != 1;
    my $k = $p;
    $k++ while substr($l, $k, 1) eq ' ';
    next if substr($l, $k, 1) ne ':';
    my $key = substr($l, $q + 1, $r - $q - 1);
    $e = 1 if $key eq 'error';
    next if $key ne 'method' && $key ne 'id';
    $k++;
    $k++ while substr($l, $k, 1) eq ' ';
    my $end;
    if (substr($l, $k, 1) eq '"') { $end = qend($l, $k) + 1 }
    else {
      my ($c, $b) = (index($l, ',', $k), index($l, '}', $k));
      $end = $c < 0 || ($b >= 0 && $b < $c) ? $b : $c;
      $end = $n if $end < 0;
      $end-- while $end > $k && index(" \t\r\n", substr($l, $end - 1, 1)) >= 0;
    }
    my $v = substr($l, $k, $end - $k);
    if ($key eq 'id') { $i = $v } else { $m = substr($v, 1, length($v) - 2) }
  }
  ($m, $i, $e);
}
# Whether a line's "_meta" object names the protocol version among its own keys: the
# 2026-07-28 envelope. Only that object is read, never the rest of the line.
sub enveloped {
  my ($l) = @_;
  my $p = index($l, '"_meta"');
  return 0 if $p < 0;
  $p = index($l, ':', $p + 7) + 1;
  $p++ while substr($l, $p, 1) eq ' ';
  return 0 if substr($l, $p, 1) ne '{';
  my ($depth, $n, $key) = (0, length $l, '"io.modelcontextprotocol/protocolVersion"');
  for (my $k = $p; $k < $n; $k++) {
    my $c = substr($l, $k, 1);
    if ($c eq '"') {
      my $r = qend($l, $k);
      my $c2 = $r + 1;
      $c2++ while substr($l, $c2, 1) eq ' ';
      return 1 if $depth == 1 && substr($l, $k, $r - $k + 1) eq $key && substr($l, $c2, 1) eq ':';
      $k = $r;
      next;
    }
    $depth++ if $c eq '{' || $c eq '[';
    $depth-- if $c eq '}' || $c eq ']';
    return 0 if $depth == 0;
  }
  0;
}
# The JSON text of a line's "uri" (resources/subscribe, unsubscribe).
sub uri {
  my ($l) = @_;
  my $k = index($l, '"uri"');
  return '' if $k < 0;
  my $q = index($l, '"', index($l, ':', $k));
  substr($l, $q, qend($l, $q) - $q + 1);
}

# The JSON text of the value of the first key `$k` in a line (a request id: string or number).
sub jv {
  my ($l, $k) = @_;
  my $p = index($l, "\"$k\"");
  return '' if $p < 0;
  $p = index($l, ':', $p + length($k) + 2) + 1;
  $p++ while substr($l, $p, 1) eq ' ';
  return substr($l, $p, qend($l, $p) - $p + 1) if substr($l, $p, 1) eq '"';
  my $e = $p;
  $e++ while $e < length($l) && index(",} \t\r\n", substr($l, $e, 1)) < 0;
  substr($l, $p, $e - $p);
}

# The key of an id's JSON text (a request id, a subscription's), as JSON-RPC compares ids: a
# string by its characters (escapes read: `"\u0031"` is `"1"`), a number by its value as a
# double (`7`, `7.0` and `7e0` are one id), never a string for a number (`"1"` is not `1`).
sub idk {
  my ($t) = @_;
  return $t if $t eq '' || $t eq 'null';
  return 's' . unq($t) if substr($t, 0, 1) eq '"';
  my $v = 0 + $t;
  'n' . ($v == 0 ? '0' : sprintf('%.17g', $v));
}
# The characters (UTF-8) of a JSON string's text, its quotes included.
sub unq {
  my ($t) = @_;
  my ($o, $k, $n) = ('', 1, length($t) - 1);
  while ($k < $n) {
    my $b = index($t, '\\', $k);
    if ($b < 0 || $b >= $n) { $o .= substr($t, $k, $n - $k); last }
    $o .= substr($t, $k, $b - $k);
    my $c = substr($t, $b + 1, 1);
    $k = $b + 2;
    if ($c ne 'u') { $o .= $c eq 'n' ? "\n" : $c eq 't' ? "\t" : $c eq 'r' ? "\r" : $c eq 'b' ? "\b" : $c eq 'f' ? "\f" : $c; next }
    my $u = hex(substr($t, $k, 4));
    $k += 4;
    if ($u >= 0xD800 && $u < 0xDC00 && substr($t, $k, 2) eq '\\u') {
      my $l = hex(substr($t, $k + 2, 4));
      if ($l >= 0xDC00 && $l < 0xE000) { $u = 0x10000 + ($u - 0xD800) * 1024 + $l - 0xDC00; $k += 6 }
    }
    my $ch = chr($u);
    utf8::encode($ch);
    $o .= $ch;
  }
  $o;
}

# A host line to the daemon: what makes the session is kept, and what awaits an answer.
sub fwd {
  my ($l) = @_;
  my ($m, $i) = top($l);
  if (defined $m) {
    if ($m eq 'initialize') { ($init, $modern, $decided) = ($l, 0, 1) }
    elsif ($m eq 'server/discover' && defined $i) { $discover = idk($i) }
    elsif ($m eq 'notifications/initialized') { $inited = $l }
    elsif ($m eq 'logging/setLevel') { $level = $l }
    elsif ($m eq 'resources/subscribe') { $subs{uri($l)} = $l }
    elsif ($m eq 'resources/unsubscribe') { delete $subs{uri($l)} }
    elsif ($m eq 'notifications/cancelled') { my $c = idk(jv($l, 'requestId')); delete $listens{$c}; delete $tools{$c} }
    if ($m eq 'subscriptions/listen' && defined $i) { $listens{idk($i)} = $l }
    elsif (defined $i) { $pending{idk($i)} = $i }
  }
  w(*S, $l);
}
sub host {
  my ($l) = @_;
  # The envelope makes the host a 2026-07-28 one only while its era is undecided: an
  # `initialize`, or the daemon's answer to its discovery, decides it once.
  $modern = 1 if !$decided && enveloped($l);
  return fwd($l) if $state eq 'open';
  if ($state eq 'down') { my ($m, $i) = top($l); o(fail($i, $gone, '')) if defined $m && defined $i; return }
  push @queue, $l;
}
sub daemon {
  my ($l) = @_;
  my ($m, $i, $e) = top($l);
  if (!defined $m && defined $i) {
    my $k = idk($i);
    if ($state eq 'replay' && delete $replay{$k}) { replayed(); return }
    # The discovery's answer: a result is the 2026-07-28 era, an error leaves the host legacy.
    if (defined $discover && $k eq $discover) { ($modern, $decided) = ($e ? 0 : 1, 1); undef $discover }
    delete $pending{$k};
    delete $listens{$k};
    delete $tools{$k};
    delete $relisten{$k};
  }
  if (defined $m && $m eq 'notifications/subscriptions/acknowledged') {
    # The filter the daemon honored: whether the stream hears of tool changes.
    my $sid = idk(jv($l, 'io.modelcontextprotocol/subscriptionId'));
    $tools{$sid} = jv($l, 'toolsListChanged') eq 'true';
    return if delete $relisten{$sid};
  }
  o($l);
}
# The daemon's connection closed: answer what was in flight, and dial again.
sub lost {
  close S;
  $s = -1;
  $dbuf = '';
  o(fail($_, $inflight, '"inFlight":true')) for values %pending;
  %pending = ();
  %relisten = ();
  exit if $in < 0 && ($state eq 'open' || !@queue);
  ($lost, $try) = (time, 0) if $state eq 'open';
  $state = 'wait' if $state ne 'down';
  later();
}
sub later {
  if ($state eq 'wait' && time - $lost >= $window) {
    $state = 'down';
    for (@queue) { my ($m, $i) = top($_); o(fail($i, $gone, '')) if defined $m && defined $i }
    @queue = ();
    o(fail((top($_))[1], $gone, '')) for values %listens;
    (%listens, %tools) = ();
    exit if $in < 0;
  }
  $wait = $state eq 'down' ? 5 : $try < 5 ? 0.1 * 2 ** $try : 2;
  $try++;
}
sub redial {
  return later() if !dial();
  $s = fileno S;
  return opened(0) if !defined $init;
  ($state, $phase, $due) = ('replay', 'init', time + 15);
  %replay = (idk((top($init))[1]) => 1);
  w(*S, $init);
}
sub replayed {
  return if %replay;
  if ($phase eq 'init') {
    $phase = 'rest';
    w(*S, $inited) if defined $inited;
    my @rest = ((defined $level ? ($level) : ()), values %subs);
    if (@rest) { for (@rest) { $replay{idk((top($_))[1])} = 1; w(*S, $_) } return }
  }
  opened(1);
}
sub opened {
  my ($restored) = @_;
  $state = 'open';
  my $said = '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"';
  if ($modern) {
    o("$said,\"params\":{\"_meta\":{\"io.modelcontextprotocol/subscriptionId\":" . (top($listens{$_}))[1] . "}}}\n")
      for grep { $tools{$_} } keys %listens;
  } elsif ($restored || $decided) { o("$said}\n") }
  for (keys %listens) { $relisten{$_} = 1; w(*S, $listens{$_}) }
  my @q = @queue;
  @queue = ();
  fwd($_) for @q;
  shutdown(S, 1) if $in < 0;
}

($state, $in, $s, $hbuf, $dbuf) = ('open', fileno STDIN, fileno S, '', '');
while (1) {
  lost() if $state eq 'replay' && time > $due;
  $r = '';
  vec($r, $s, 1) = 1 if $s >= 0;
  vec($r, $in, 1) = 1 if $in >= 0;
  $t = $state eq 'open' ? undef : $state eq 'replay' ? 1 : $wait;
  ($n, $left) = select($r, undef, undef, $t);
  exit if $n < 0;
  if ($n == 0) {
    if ($state eq 'replay') { lost() if time > $due } else { redial() }
    next;
  }
  $wait = $left if defined $t && defined $left && $state ne 'replay';
  if ($in >= 0 && vec($r, $in, 1)) {
    if (sysread(STDIN, $d, 65536)) {
      $hbuf .= $d;
      while ((my $k = index($hbuf, "\n")) >= 0) { host(substr($hbuf, 0, $k + 1)); substr($hbuf, 0, $k + 1) = '' }
    } else {
      $in = -1;
      if ($state eq 'open') { shutdown(S, 1) } elsif ($state eq 'down' || !@queue) { exit }
    }
  }
  if ($s >= 0 && vec($r, $s, 1)) {
    if (sysread(S, $d, 65536)) {
      $dbuf .= $d;
      while ($s >= 0 && (my $k = index($dbuf, "\n")) >= 0) { my $l = substr($dbuf, 0, $k + 1); substr($dbuf, 0, $k + 1) = ''; daemon($l) }
    } else { lost() }
  }
}

# Answers every request on stdin (a line with a "method" and an "id") with `$m`, until EOF.
sub refuse {
  my ($m) = @_;
  while (defined(my $l = <STDIN>)) {
    my ($method, $i) = top($l);
    next if !defined $method || !defined $i;
    o(fail($i, $m, ''));
  }
  exit 1;
}
