//! Who is asking: the bearer token of a member of a household (`trove token new`), checked by the `Auth` use
//! case that `app` puts in the request's data. Every `/api` route takes a [`Member`].

use crate::error::ApiError;
use poem::Request;
use poem_openapi::SecurityScheme;
use poem_openapi::auth::Bearer;
use trove_application::auth::Auth;
use trove_domain::HouseholdId;

/// A member of a household, by bearer token (`trove token new`).
#[derive(SecurityScheme)]
#[oai(ty = "bearer", checker = "member_of")]
pub struct Member(pub HouseholdId);

async fn member_of(req: &Request, bearer: Bearer) -> poem::Result<HouseholdId> {
    let auth = req.data::<Auth>().ok_or_else(ApiError::unauthorized)?;
    match auth.household(&bearer.token).await.map_err(ApiError::from)? {
        Some(h) => Ok(h),
        None => Err(ApiError::unauthorized().into()),
    }
}
