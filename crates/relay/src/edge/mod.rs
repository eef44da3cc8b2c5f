//! The edge: what every route shares (`extract`: the router state, principals, bodies; `external`: Host/Origin; `error`: `ApiError`, the JSON error answers and the status of each core fault), the streams (`sse`, `ws`), the server loop and the console's files. It serves the core; features and the router build on it.

pub mod assets;
pub mod error;
pub mod external;
pub mod extract;
pub mod headers;
pub mod serve;
pub mod sse;
pub mod ws;
