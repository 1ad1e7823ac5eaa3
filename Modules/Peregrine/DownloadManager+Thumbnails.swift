#if Thumbnails
    extension DownloadManager {
        /// The picture of a task at once (SDE's `requestThumbnail(forTask:targetHeight:orLaterProvidedInHandler:)`):
        /// a cached or custom thumbnail, else the type icon — and, when a real thumbnail of an image
        /// or video can be made, `handler` is called with it later, on a thumbnail thread.
        ///
        /// - Returns: nil for an unknown task.
        public func requestThumbnail(
            forTask urlString: String, targetHeight: Int,
            orLaterProvidedInHandler handler: @escaping @Sendable (Thumbnail) -> Void
        ) -> Thumbnail? {
            guard let source = thumbnailSource(urlString) else { return nil }
            return thumbnailer.requestThumbnail(
                for: source, targetHeight: targetHeight, orLaterProvidedInHandler: handler)
        }

        /// ``requestThumbnail(forTask:targetHeight:orLaterProvidedInHandler:)``, saying whether
        /// `handler` will be called with a better picture (`isFinal` false) or the one returned
        /// is the best there is.
        ///
        /// - Returns: nil for an unknown task.
        public func requestThumbnailTellingWhetherLater(
            forTask urlString: String, targetHeight: Int,
            orLaterProvidedInHandler handler: @escaping @Sendable (Thumbnail) -> Void
        ) -> (thumbnail: Thumbnail, isFinal: Bool)? {
            guard let source = thumbnailSource(urlString) else { return nil }
            return thumbnailer.requestThumbnailTellingWhetherLater(
                for: source, targetHeight: targetHeight, orLaterProvidedInHandler: handler)
        }

        /// Empties the thumbnail caches (SDE's `emptyThumbnailCache()`); custom thumbnails stay.
        public func emptyThumbnailCache() { thumbnailer.emptyThumbnailCache() }

        /// Makes `thumbnail` the picture of a task (SDE's `setCustomThumbnail(_:forTask:cacheInMemoryOnly:)`),
        /// saved through the store unless `cacheInMemoryOnly`.
        ///
        /// - Throws: `DownloadManagerError/Code/unknownTask`; `DownloadManagerError/Code/invalidState`
        ///   for an image file (it is its own thumbnail), `DownloadManagerError/Code/fileFailed` when
        ///   the picture cannot be written.
        public func setCustomThumbnail(
            _ thumbnail: Thumbnail, forTask urlString: String, cacheInMemoryOnly: Bool
        ) throws(DownloadManagerError) {
            core.coordinator.enter()
            defer { core.coordinator.leave() }
            guard let kind = engine.fileKind(ofTask: urlString) else { throw DownloadManagerError.unknown(urlString) }
            guard kind != .image else {
                throw DownloadManagerError(.invalidState, "\(urlString) is an image: it is its own thumbnail")
            }
            do {
                try thumbnailer.setCustomThumbnail(thumbnail, forTask: urlString, cacheInMemoryOnly: cacheInMemoryOnly)
            } catch {
                throw DownloadManagerError(.fileFailed, "cannot keep the custom thumbnail: \(error)")
            }
        }

        /// Removes a task's custom thumbnail and returns it (SDE's `removeCustomThumbnailForTask(_:)`).
        @discardableResult
        public func removeCustomThumbnailForTask(_ urlString: String) -> Thumbnail? {
            core.coordinator.enter()
            defer { core.coordinator.leave() }
            return thumbnailer.removeCustomThumbnailForTask(urlString)
        }

        /// What the thumbnailer needs to know of a task.
        func thumbnailSource(_ urlString: String) -> ThumbnailSource? {
            guard let snapshot = engine.task(urlString) else { return nil }
            let record = snapshot.record
            return ThumbnailSource(
                taskKey: urlString, filePath: engine.filePath(ofTask: urlString),
                fileName: record.fileName ?? record.preferredFileName, mimeType: record.mimeType,
                kind: engine.fileKind(ofTask: urlString))
        }
    }
#endif
