//! The backups the server keeps: the last one's time and size, one made now, and an archive to download (owners of
//! the server's only household: an archive holds every household).

use crate::auth::Person;
use crate::error::{ApiError, ApiResult};
use crate::services::Services;
use chrono::{DateTime, Utc};
use poem::Body;
use poem::http::StatusCode;
use poem_openapi::param::Path;
use poem_openapi::payload::{Binary, Json};
use poem_openapi::{ApiResponse, Object, OpenApi, Tags};
use trove_application::ports::BackupFile;

#[derive(Tags)]
enum Tag {
    /// Backups of the whole store.
    Backups,
}

/// One archive.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct BackupFileDto {
    /// Its file name (`trove-backup-<time>.tar`), to download with `GET /api/backups/{name}`.
    pub name: String,
    pub at: DateTime<Utc>,
    pub bytes: u64,
}

impl From<&BackupFile> for BackupFileDto {
    fn from(f: &BackupFile) -> Self {
        Self { name: f.name.clone(), at: f.at, bytes: f.bytes }
    }
}

/// The backups the server keeps.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct BackupStatusDto {
    /// `TROVE_BACKUP_EVERY` in seconds; `null`: no scheduled backups.
    pub every_secs: Option<u64>,
    /// `TROVE_BACKUP_KEEP`: the newest this many are kept.
    pub keep: u64,
    /// The newest archive, `null` when there is none.
    pub last: Option<BackupFileDto>,
    /// Archives kept.
    pub count: u64,
}

/// A backup made now.
#[derive(ApiResponse)]
pub enum BackupMade {
    /// Written whole into the backup directory (the oldest beyond the number kept were removed).
    #[oai(status = 201)]
    Created(Json<BackupFileDto>),
}

/// An archive.
#[derive(ApiResponse)]
pub enum BackupDownload {
    /// The tar archive (`trove restore FILE` restores it).
    #[oai(status = 200, content_type = "application/x-tar")]
    Archive(Binary<Body>, #[oai(header = "Content-Disposition")] String),
}

/// The backup routes.
pub struct BackupsApi(pub Services);

#[OpenApi(tag = "Tag::Backups")]
impl BackupsApi {
    /// The backups the server keeps (owners): the schedule, the last archive's time and size, how many are kept.
    #[oai(path = "/backups", method = "get")]
    async fn status(&self, Person(c): Person) -> ApiResult<Json<BackupStatusDto>> {
        let s = self.0.backups.status(&c).await.map_err(ApiError::from)?;
        Ok(Json(BackupStatusDto {
            every_secs: s.every.map(|d| d.as_secs()),
            keep: s.keep as u64,
            last: s.last.as_ref().map(Into::into),
            count: s.count as u64,
        }))
    }

    /// Make a backup now (owners of the server's only household; 403 when it holds others: the operator runs
    /// `trove backup`). The archive is kept with the scheduled ones.
    #[oai(path = "/backups", method = "post")]
    async fn make(&self, Person(c): Person) -> ApiResult<BackupMade> {
        let made = self.0.backups.make(&c).await.map_err(ApiError::from)?;
        Ok(BackupMade::Created(Json((&made).into())))
    }

    /// Download an archive the server keeps (as for making one; 404 for a name that is not one of them).
    #[oai(path = "/backups/:name", method = "get")]
    async fn download(&self, Person(c): Person, name: Path<String>) -> ApiResult<BackupDownload> {
        let path = self
            .0
            .backups
            .file(&c, &name.0)
            .await
            .map_err(ApiError::from)?
            .ok_or_else(|| ApiError::new(StatusCode::NOT_FOUND, "not_found", format!("no backup {:?}", name.0)))?;
        let file =
            tokio::fs::File::open(&path).await.map_err(|e| ApiError::unexpected(format!("open the backup: {e}")))?;
        Ok(BackupDownload::Archive(Binary(Body::from_async_read(file)), format!("attachment; filename=\"{}\"", name.0)))
    }
}
