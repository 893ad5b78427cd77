// Preloaded into Node servers the tests start (NODE_OPTIONS=--require <this file>): every
// listening socket of the process binds 127.0.0.1, whatever host the server asked for, so a
// test server never listens on another interface (server-everything binds all of them).
"use strict";
const net = require("net");
const listen = net.Server.prototype.listen;
const isPort = (v) => typeof v === "number" || (typeof v === "string" && /^\d+$/.test(v));
net.Server.prototype.listen = function (...args) {
  if (isPort(args[0])) {
    if (typeof args[1] === "string") args[1] = "127.0.0.1";
    else args.splice(1, 0, "127.0.0.1");
  } else if (args[0] && typeof args[0] === "object" && !Array.isArray(args[0]) && "port" in args[0]) {
    args[0] = { ...args[0], host: "127.0.0.1" };
  }
  return listen.apply(this, args);
};
