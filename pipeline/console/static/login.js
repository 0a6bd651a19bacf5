// The login page: says when the last try failed, and where to go back to afterwards.
"use strict";
const query = new URLSearchParams(location.search);
document.getElementById("failed").hidden = query.get("failed") !== "1";
const next = query.get("next");
if (next && next.startsWith("/") && !next.startsWith("//")) {
  document.getElementById("next").value = next;
}
