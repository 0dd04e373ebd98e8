// The internal port's reference. Its document is for the callers
// INTERNAL_CALLERS names only, so the page asks for one's identity token
// (locally: `storefront token fulfilment@storefront.iam.gserviceaccount.com`),
// reads the document with it, and hands it to Redoc. The token stays in
// this page: it is sent to this port alone and kept nowhere.
const form = document.getElementById("token-form");
form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const status = document.getElementById("status");
  const token = document.getElementById("token").value.trim();
  status.textContent = "Reading the document...";
  const reply = await fetch("/internal/openapi.json", {
    headers: { Authorization: `Bearer ${token}` },
  });
  if (!reply.ok) {
    const body = await reply.json().catch(() => ({}));
    status.textContent = `${reply.status}: ${body.message || "the document was refused"}`;
    return;
  }
  const spec = await reply.json();
  form.hidden = true;
  status.textContent = "";
  Redoc.init(spec, { expandResponses: "200,201" }, document.getElementById("reference"));
});
